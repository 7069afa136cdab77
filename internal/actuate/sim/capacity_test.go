package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
)

// TestCapacityModel follows REPLAY.md's market model step by step: launches beyond the capacity
// left stay pending and are reported so; a drop below what runs reclaims the newest with the
// provider's notice; capacity coming back places what is pending.
func TestCapacityModel(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	f.SetCapacity("a", 1)
	if err := f.Scale(ctx, actuate.Target{Group: spot, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name         string
		advance      time.Duration
		capacity     int // -1: unchanged
		wantReady    int
		wantStarting int
		wantPending  int
		wantNotices  int
	}{
		{"one launch fits, two stay pending", 0, -1, 0, 1, 2, 0},
		{"the one that fit is ready after the delay", time.Minute, -1, 1, 0, 2, 0},
		{"capacity comes back: the pending launch", 0, 3, 1, 2, 0, 0},
		{"a drop reclaims the newest with notice", 10 * time.Second, 1, 1, 2, 0, 2},
		{"gone at the deadline (aws: 2 min), pending again", 2 * time.Minute, -1, 1, 0, 2, 0},
	}
	for _, s := range steps {
		c.now = c.now.Add(s.advance)
		if s.capacity >= 0 {
			f.SetCapacity("a", s.capacity)
		}
		notices := f.Due()
		o := observe(t, f)
		if o.Ready != s.wantReady || len(o.Starting) != s.wantStarting || o.Pending != s.wantPending || len(notices) != s.wantNotices {
			t.Errorf("%s: ready %d starting %d pending %d notices %d, want %d %d %d %d", s.name, o.Ready, len(o.Starting),
				o.Pending, len(notices), s.wantReady, s.wantStarting, s.wantPending, s.wantNotices)
		}
		if o.Pending > 0 && o.Reason != actuate.ReasonNoCapacity {
			t.Errorf("%s: pending reason %q, want %q", s.name, o.Reason, actuate.ReasonNoCapacity)
		}
		for _, n := range notices {
			if !n.Deadline.Equal(c.now.Add(2*time.Minute)) || n.Location != "a" {
				t.Errorf("%s: notice %+v, want aws's 2 min at a", s.name, n)
			}
		}
	}
}

// TestCapacityTraceAndZeroNotice replays a capacity trace with the replay's zero notice: a loss
// takes the newest instance at once and is not billed past it.
func TestCapacityTraceAndZeroNotice(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	f.SetNotice(0)
	f.UseTrace(sim.Trace{Start: c.now, Tick: 30 * time.Second, Counts: map[string][]int{"a": {2, 2, 1, 0, 2}}})
	_ = f.Scale(ctx, actuate.Target{Group: spot, Replicas: 2})
	wantRunning := []int{2, 2, 1, 0, 2}
	for tick, want := range wantRunning {
		c.now = c.now.Add(map[bool]time.Duration{true: 0, false: 30 * time.Second}[tick == 0])
		notices := f.Due()
		o := observe(t, f)
		if got := o.Ready + len(o.Starting); got != want || o.Pending != 2-want {
			t.Errorf("tick %d: %d running, %d pending; want %d, %d", tick, got, o.Pending, want, 2-want)
		}
		for _, n := range notices {
			if !n.Deadline.Equal(c.now) {
				t.Errorf("tick %d: deadline %v, want now", tick, n.Deadline)
			}
		}
	}
	lives := f.Lives()
	if len(lives) != 4 || !lives[1].Reclaim || !lives[1].Gone.Equal(lives[1].Launched.Add(time.Minute)) {
		t.Errorf("lives = %+v, want the newest reclaimed at tick 2 and two launched again at tick 4", lives)
	}
}
