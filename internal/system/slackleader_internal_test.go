package system

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestWhileLeadingFollowsTheLead: the part runs from the check that finds the lead taken until
// the one that finds it lost, and again on the next lead; it is never started twice at once.
func TestWhileLeadingFollowsTheLead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lead atomic.Bool
		var starts, running, most atomic.Int32
		part := func(ctx context.Context) error {
			starts.Add(1)
			if n := running.Add(1); n > most.Load() {
				most.Store(n)
			}
			<-ctx.Done()
			running.Add(-1)
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- whileLeading(ctx, lead.Load, time.Second, part) }()
		steps := []struct {
			lead        bool
			wantRunning int32
			wantStarts  int32
		}{
			{false, 0, 0}, // a standby: nothing runs
			{true, 1, 1},  // takes the lead: it runs
			{true, 1, 1},  // still leading: the same run
			{false, 0, 1}, // loses the lead: stopped
			{true, 1, 2},  // leads again: a new run
		}
		for i, s := range steps {
			lead.Store(s.lead)
			time.Sleep(time.Second) // one check
			synctest.Wait()
			if running.Load() != s.wantRunning || starts.Load() != s.wantStarts {
				t.Fatalf("step %d (lead %v): running %d, started %d times; want %d, %d",
					i, s.lead, running.Load(), starts.Load(), s.wantRunning, s.wantStarts)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if running.Load() != 0 || most.Load() != 1 {
			t.Fatalf("after the end: running %d, at most %d at once", running.Load(), most.Load())
		}
	})
}

// TestWhileLeadingEndsOnAFailure: a part that fails while leading ends it with the error (the
// arbiter stops, as without a lease); one that returns nil is started again at the next check.
func TestWhileLeadingEndsOnAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("invalid_auth")
		var starts atomic.Int32
		part := func(context.Context) error {
			if starts.Add(1) < 3 {
				return nil
			}
			return boom
		}
		err := whileLeading(context.Background(), func() bool { return true }, time.Second, part)
		if !errors.Is(err, boom) || starts.Load() != 3 {
			t.Fatalf("err %v after %d starts; want %v after 3", err, starts.Load(), boom)
		}
	})
}
