package arbiter

import (
	"context"
	"errors"
	"strings"
	"time"
)

// askRetry is how often a request Slack refused is tried again.
const askRetry = 5 * time.Second

// Ask queues a hold for the ask loop, once per hold id: the arbiter hands over every hold it
// records and, on taking the lead, every hold in the books.
func (b *Budgets) Ask(_ context.Context, h Hold) {
	b.mu.Lock()
	if b.asked[h.ID] {
		b.mu.Unlock()
		return
	}
	b.asked[h.ID] = true
	b.mu.Unlock()
	b.asks.add(h)
}

// ask posts queued requests as they come (Run: b.asks.run(ctx, b.ask)), and returns those Slack
// refused, to retry until their deadline, when the hold is rejected: nobody could be asked in
// time. Where a request is posted is written back to the books, so a new leader resumes the same
// message.
func (b *Budgets) ask(ctx context.Context, todo []Hold) []Hold {
	var again []Hold
	for _, h := range todo {
		if !b.stillAsked(h.ID) { // decided while it waited for a retry: asking again posts a question nobody can answer
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

// stillAsked says whether hold id is still to be asked: queued and not decided since (Decided
// forgets it).
func (b *Budgets) stillAsked(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.asked[id]
}

func (b *Budgets) posted(ctx context.Context, h Hold, at Message) {
	if dec := b.decider(); dec != nil {
		if err := dec.Posted(ctx, h.ID, at.Channel, at.TS); err != nil {
			b.o.Log.Warn("recording where an approval was posted; a new leader would post it again", "hold", h.ID, "err", err)
		}
	}
}

// Decided applies an approval's outcome on hold id: approved or not, by who (a user id, or
// "timeout"). An error says this arbiter could not apply it (it does not lead, or the hold is
// gone).
func (b *Budgets) Decided(ctx context.Context, id string, approve bool, who string) error {
	b.mu.Lock()
	delete(b.asked, id)
	b.mu.Unlock()
	dec := b.decider()
	if dec == nil {
		return errors.New("the arbiter is not attached to its budgets yet")
	}
	if err := dec.Decide(ctx, id, approve, who); err != nil {
		b.o.Log.Warn("applying an approval decision", "hold", id, "approved", approve, "err", err)
		return err
	}
	return nil
}

func (b *Budgets) decider() Decider {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dec
}

// cutOffer splits an offer id (location/zone/instance type/market) into its location and market.
func cutOffer(id string) (loc, market string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 4 {
		return "", "", false
	}
	return parts[0], parts[3], true
}
