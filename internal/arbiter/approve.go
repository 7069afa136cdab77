package arbiter

import (
	"context"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// askRetry is how often a request Slack refused is tried again.
const askRetry = 5 * time.Second

// ask is an approval request not yet posted.
type ask struct {
	req      slack.Request
	workload string
	actionID string
	deadline time.Time
}

// queue holds an approval request for the ask loop. Each held action is its own request: its
// plan id is the action id, which is what the Approve/Reject buttons carry back.
func (b *Budgets) queue(p Proposal, v budget.Verdict, now time.Time) {
	a := p.Action
	loc, _, _ := cutOffer(a.Offer)
	plan := events.PlanDecided{Meta: events.Meta{At: now}, Workload: p.Workload, PlanID: a.ID,
		USDPerHourWas: p.CostBefore, USDPerHourNow: p.CostBefore + a.CostPerHour, NeedsApproval: true,
		Actions: []events.PlanAction{{ID: a.ID, Kind: string(a.Kind), Location: loc, Offer: a.Offer,
			Market: marketOf(a.Offer), Replicas: a.Count, Delta: delta(a), Reason: string(a.Reason), NeedsApproval: true}}}
	req := slack.RequestFor(plan, v)
	b.mu.Lock()
	b.asks = append(b.asks, ask{req: req, workload: p.Workload, actionID: a.ID, deadline: now.Add(req.Timeout)})
	b.mu.Unlock()
	signal(b.wake)
}

// askLoop posts queued requests as they come, retrying those Slack refused until their timeout,
// when the action is rejected: nobody could be asked in time.
func (b *Budgets) askLoop(ctx context.Context) {
	t := time.NewTicker(askRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		case <-t.C:
		}
		b.mu.Lock()
		todo := b.asks
		b.asks = nil
		b.mu.Unlock()
		var again []ask
		for _, a := range todo {
			err := b.o.Asker.Ask(ctx, a.req)
			switch {
			case err == nil:
			case !b.o.Clock.Now().Before(a.deadline):
				b.o.Log.Warn("could not ask for approval before the timeout; rejecting", "workload", a.workload,
					"action", a.actionID, "err", err)
				b.apply(ctx, a.workload, a.actionID, events.ActionRejected, "timeout")
			default:
				b.o.Log.Warn("could not ask for approval; will retry", "workload", a.workload, "action", a.actionID, "err", err)
				again = append(again, a)
			}
		}
		b.mu.Lock()
		b.asks = append(again, b.asks...)
		b.mu.Unlock()
	}
}

// Decided applies an approval's outcome: set it as the Approvals' OnDecision. The decision was
// already published (with the deciding Slack user) as action.updated; the arbiter's own step
// event carries the same id and is dropped as a duplicate.
func (b *Budgets) Decided(ctx context.Context, d slack.Decision) {
	for _, a := range d.Plan.Actions {
		b.apply(ctx, d.Plan.Workload, a.ID, d.Status, d.Actor)
	}
}

func (b *Budgets) apply(ctx context.Context, workload, actionID string, st events.ActionStatus, who string) {
	b.mu.Lock()
	dec := b.decider
	b.mu.Unlock()
	if dec == nil {
		b.o.Log.Error("an approval was decided before the arbiter was attached; it is lost", "action", actionID)
		return
	}
	do := dec.Reject
	if st == events.ActionApproved {
		do = dec.Approve
	}
	if err := do(ctx, workload, actionID, who); err != nil {
		b.o.Log.Warn("applying an approval decision", "workload", workload, "action", actionID, "status", st, "err", err)
	}
}

// cutOffer splits an offer id (location/zone/instance type/market) into its location and market.
func cutOffer(id string) (loc, market string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 4 {
		return "", "", false
	}
	return parts[0], parts[3], true
}

func marketOf(offer string) events.Market {
	_, m, _ := cutOffer(offer)
	return marketOr(events.Market(m))
}
