package arbiter

import (
	"context"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// outsideCall bounds one call to something outside the arbiter (Slack, a publish of an alert):
// a slow service costs that call, never the loop that made it.
const outsideCall = 10 * time.Second

// queueAlerts hands crossed thresholds to the alert loop. Caps runs on the planning pass, on the
// path from a reclaim to its action, so it never publishes or posts itself.
func (b *Budgets) queueAlerts(alerts []*events.BudgetAlert) {
	if len(alerts) == 0 {
		return
	}
	b.mu.Lock()
	b.alerts = append(b.alerts, alerts...)
	b.mu.Unlock()
	signal(b.alertWake)
}

// alertLoop publishes queued budget alerts and posts them (OnAlert), each call with its own
// deadline; an alert that could not be published is tried again, in order, every askRetry.
func (b *Budgets) alertLoop(ctx context.Context) {
	t := time.NewTicker(askRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.alertWake:
		case <-t.C:
		}
		b.mu.Lock()
		todo := b.alerts
		b.alerts = nil
		b.mu.Unlock()
		if left := b.sendAlerts(ctx, todo); len(left) > 0 {
			b.mu.Lock()
			b.alerts = append(left, b.alerts...)
			b.mu.Unlock()
		}
	}
}

// sendAlerts publishes alerts in order and returns those from the first that failed on.
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
