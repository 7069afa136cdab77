package arbiter

import (
	"context"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// outsideCall bounds one call to something outside the arbiter (Slack, a publish of an alert):
// a slow service costs that call, never the loop that made it.
const outsideCall = 10 * time.Second

// queueAlerts hands crossed thresholds to the alert loop (Run: b.alerts.run(ctx, b.sendAlerts)).
// Caps runs on the planning pass, on the path from a reclaim to its action, so it never publishes
// or posts itself; an alert that could not be published is tried again, in order.
func (b *Budgets) queueAlerts(alerts []*events.BudgetAlert) {
	if len(alerts) > 0 {
		b.alerts.add(alerts...)
	}
}

// sendAlerts publishes alerts in order and posts them (OnAlert), each call with its own
// deadline, and returns those from the first that failed on.
func (b *Budgets) sendAlerts(ctx context.Context, alerts []*events.BudgetAlert) []*events.BudgetAlert {
	for i, a := range alerts {
		pctx, cancel := context.WithTimeout(ctx, outsideCall)
		err := b.pub.Publish(pctx, events.Stamp(a))
		cancel()
		if err != nil {
			b.o.Log.Warn("budget alert not published; trying again", "policy", a.Policy, "err", err)
			return alerts[i:]
		}
		b.o.Log.Info("budget threshold", "policy", a.Policy, "basis", a.Basis, "threshold", a.Threshold,
			"spend", a.Spend, "limit", a.Limit, "cleared", a.Cleared)
		if b.o.OnAlert != nil {
			octx, cancel := context.WithTimeout(ctx, outsideCall)
			b.o.OnAlert(octx, a)
			cancel()
		}
	}
	return nil
}
