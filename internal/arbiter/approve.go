package arbiter

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// askRetry is how often a request Slack refused is tried again.
const askRetry = 5 * time.Second

// asking is the approvals side of Budgets: the holds handed over to be asked about and not
// decided since, the queue of those not yet posted, and who applies the decisions. Its methods
// alone take its lock, and nothing of it is under Budgets.mu (the spend ledger's lock).
type asking struct {
	queue *retrying[Hold] // holds not yet posted (or refused, to retry); locks itself

	mu    sync.Mutex
	asked map[string]bool // handed to add and not decided since
	dec   Decider
}

func newAsking() asking { return asking{queue: newRetrying[Hold](), asked: map[string]bool{}} }

// add queues h for the ask loop unless its id was handed over before and not decided since.
func (a *asking) add(h Hold) {
	a.mu.Lock()
	if a.asked[h.ID] {
		a.mu.Unlock()
		return
	}
	a.asked[h.ID] = true
	a.mu.Unlock()
	a.queue.add(h)
}

// still says whether hold id is still to be asked: queued and not decided since (forget).
func (a *asking) still(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked[id]
}

// forget drops hold id once decided: a retry waiting for it is skipped, and a later add of the
// same id queues it again.
func (a *asking) forget(id string) {
	a.mu.Lock()
	delete(a.asked, id)
	a.mu.Unlock()
}

func (a *asking) attach(d Decider) {
	a.mu.Lock()
	a.dec = d
	a.mu.Unlock()
}

func (a *asking) decider() Decider {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dec
}

// Attach names who applies decisions; call it with the Service before approvals can arrive.
func (b *Budgets) Attach(d Decider) { b.asking.attach(d) }

// Ask queues a hold for the ask loop, once per hold id: the arbiter hands over every hold it
// records and, on taking the lead, every hold in the books.
func (b *Budgets) Ask(_ context.Context, h Hold) { b.asking.add(h) }

// ask posts queued requests as they come (Run: b.asking.queue.run(ctx, b.ask)), and returns
// those Slack refused, to retry until their deadline, when the hold is rejected: nobody could be
// asked in time. Where a request is posted is written back to the books, so a new leader resumes
// the same message.
func (b *Budgets) ask(ctx context.Context, todo []Hold) []Hold {
	var again []Hold
	for _, h := range todo {
		if !b.asking.still(h.ID) { // decided while it waited for a retry: asking again posts a question nobody can answer
			continue
		}
		actx, cancel := context.WithTimeout(ctx, outsideCall)
		at, err := b.o.Approvals.Ask(actx, h)
		cancel()
		switch {
		case err == nil && at.TS != h.TS:
			b.posted(ctx, h, at)
		case err == nil:
		case !h.Deadline.IsZero() && !b.o.Clock.Now().Before(h.Deadline):
			b.o.Log.Warn("could not ask for approval before the timeout; rejecting", "hold", h.ID,
				"workloads", h.Workloads(), "err", err)
			_ = b.Decided(ctx, h.ID, false, "timeout") // logged there
		default:
			b.o.Log.Warn("could not ask for approval; will retry", "hold", h.ID, "err", err)
			again = append(again, h)
		}
	}
	return again
}

func (b *Budgets) posted(ctx context.Context, h Hold, at Message) {
	if dec := b.asking.decider(); dec != nil {
		if err := dec.Posted(ctx, h.ID, at.Channel, at.TS); err != nil {
			b.o.Log.Warn("recording where an approval was posted; a new leader would post it again", "hold", h.ID, "err", err)
		}
	}
}

// Decided applies an approval's outcome on hold id: approved or not, by who (a user id, or
// "timeout"). An error says this arbiter could not apply it (it does not lead, or the hold is
// gone).
func (b *Budgets) Decided(ctx context.Context, id string, approve bool, who string) error {
	b.asking.forget(id)
	dec := b.asking.decider()
	if dec == nil {
		return errors.New("the arbiter is not attached to its budgets yet")
	}
	if err := dec.Decide(ctx, id, approve, who); err != nil {
		b.o.Log.Warn("applying an approval decision", "hold", id, "approved", approve, "err", err)
		return err
	}
	return nil
}

// cutOffer splits an offer id (location/zone/instance type/market) into its location and market.
func cutOffer(id string) (loc, market string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 4 {
		return "", "", false
	}
	return parts[0], parts[3], true
}
