package arbiter_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// slowApprovals is an approvals port whose first ask of each hold fails as a Slack that answers
// too late does (the question may be in the channel all the same); it counts the asks.
type slowApprovals struct {
	mu    sync.Mutex
	asks  map[string]int
	asked chan string
}

func (a *slowApprovals) Ask(_ context.Context, h arbiter.Hold) (arbiter.Message, error) {
	a.mu.Lock()
	a.asks[h.ID]++
	n := a.asks[h.ID]
	a.mu.Unlock()
	a.asked <- h.ID
	if n == 1 {
		return arbiter.Message{}, context.DeadlineExceeded
	}
	return arbiter.Message{Channel: "C0", TS: "1.000001"}, nil
}

func (a *slowApprovals) count(id string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asks[id]
}

// settles is a Decider that applies every decision.
type settles struct{}

func (settles) Decide(context.Context, string, bool, string) error { return nil }
func (settles) Posted(context.Context, string, string, string) error {
	return errors.New("not expected: no ask got through")
}

// TestDecidedHoldIsNotAskedAgain: a hold whose ask failed waits for a retry; decided meanwhile
// (the approver clicked the message the slow post left in the channel), the retry drops it
// instead of posting the question again.
func TestDecidedHoldIsNotAskedAgain(t *testing.T) {
	env := bustest.Start(t)
	ap := &slowApprovals{asks: map[string]int{}, asked: make(chan string, 8)}
	b := arbiter.NewBudgets(arbiter.BudgetOptions{Config: &fleet.Config{}, JS: env.JS, Approvals: ap})
	b.Attach(settles{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait := func(want string) {
		t.Helper()
		select {
		case id := <-ap.asked:
			if id != want {
				t.Fatalf("asked %s, want %s", id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not asked", want)
		}
	}
	b.Ask(ctx, arbiter.Hold{ID: "h1"})
	wait("h1") // failed: queued for a retry
	if err := b.Decided(ctx, "h1", false, "U0APPROVER"); err != nil {
		t.Fatal(err)
	}
	b.Ask(ctx, arbiter.Hold{ID: "h2"}) // wakes the loop, which takes the retry first
	wait("h2")
	if n := ap.count("h1"); n != 1 {
		t.Errorf("h1 asked %d times, want once: it was decided before its retry", n)
	}
}
