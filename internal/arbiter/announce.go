package arbiter

import (
	"log/slog"
	"math"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// announcer publishes what the arbiter did: action.updated for each step of an action,
// plan.decided, job.state and job.progress, replica.state. Publishing is asynchronous and never
// waits: the book in the placement bucket is the record the arbiter resumes from, and the events
// are the audit trail.
type announcer struct {
	pub   *bus.Publisher
	log   *slog.Logger
	clock Clock
	actor string // "arbiter/<identity>": who took the steps the arbiter took itself
}

// publish publishes e, logging (not returning) a failure to hand it to the bus; about names what
// e is about in that log line. It says whether the bus took e.
func (a *announcer) publish(e events.Event, about ...any) bool {
	if _, err := a.pub.PublishAsync(e); err != nil {
		a.log.Warn("could not publish "+string(e.EventType()), append(about, "err", err)...)
		return false
	}
	return true
}

// announce publishes an action's step as action.updated, taken by this arbiter.
func (a *announcer) announce(rec Record, workload string, st events.ActionStatus, detail string) {
	a.announceBy(rec, workload, st, a.actor, detail)
}

// announceBy announces a step someone else took: an approval's decision, by the Slack user who
// decided or "timeout", as the approvals announce the same step.
func (a *announcer) announceBy(rec Record, workload string, st events.ActionStatus, actor, detail string) {
	e := &events.ActionUpdated{Meta: events.Meta{At: a.clock.Now()}, Workload: workload, ActionID: rec.Target.ActionID,
		PlanID: rec.PlanID, Status: st, Kind: rec.Target.Kind, Location: rec.Target.Location, Offer: rec.Target.Offer,
		Market: marketOr(rec.Target.Market), Replicas: rec.Target.Replicas, Reason: rec.Target.Reason,
		Actor: actor, Detail: detail}
	// The id names the action and the step, not the time: a step re-announced after a restart is
	// the same fact.
	e.ID = events.ID(&events.ActionUpdated{Workload: workload, ActionID: rec.Target.ActionID, Status: st})
	a.publish(e, "action", rec.Target.ActionID)
	a.tell(rec, workload, st, actor, detail)
}

// tell logs, at INFO, a step that is an action's outcome, one line each: what a person watching
// the log wants to see (what it did, to which workload, where, why, and what it does to the cost
// per hour), where the events are the audit trail. Other steps (proposed, approved) and retries
// are not outcomes and stay quiet.
func (a *announcer) tell(rec Record, workload string, st events.ActionStatus, actor, detail string) {
	msg, ok := outcome(rec, st)
	if !ok {
		return
	}
	t := rec.Target
	attrs := []any{"workload", workload, "kind", t.Kind, "replicas", t.Replicas, "location", t.Location,
		"offer", t.Offer, "market", marketOr(t.Market), "reason", t.Reason,
		"usd_per_hour_change", math.Round(rec.CostPerHour*1e4) / 1e4, "action", t.ActionID, "plan", rec.PlanID}
	if actor != a.actor {
		attrs = append(attrs, "by", actor)
	}
	if detail != "" {
		attrs = append(attrs, "detail", detail)
	}
	a.log.Info(msg, attrs...)
}

// outcome names the step st of rec when it is an outcome: applied, failed, held for an approval,
// rejected, or a launch given up (the retire recorded for a launch that got no capacity).
func outcome(rec Record, st events.ActionStatus) (string, bool) {
	switch {
	case st == events.ActionApplied:
		return "action applied", true
	case st == events.ActionFailed:
		return "action failed", true
	case st == events.ActionAwaitingApproval:
		return "action held for approval", true
	case st == events.ActionRejected:
		return "action rejected", true
	case st == events.ActionProposed && rec.Target.Reason == ReasonLaunchFailed:
		return "launch given up", true
	}
	return "", false
}

func marketOr(m events.Market) events.Market {
	if m == "" {
		return events.OnDemand
	}
	return m
}

// decided publishes one plan.decided per workload the decision acts on, with each action as the
// books recorded it.
func (l *ledger) decided(d placement.Decision) {
	by := map[string][]events.PlanAction{}
	needs := map[string]bool{}
	for _, a := range d.Actions {
		b := l.books[a.Workload]
		var rec *Record
		if b != nil {
			rec = b.record(a.ID)
		}
		if rec == nil {
			continue // not recorded: already done, or blocked
		}
		by[a.Workload] = append(by[a.Workload], events.PlanAction{ID: a.ID, Kind: string(a.Kind),
			Location: rec.Target.Location, Offer: a.Offer, Market: marketOr(rec.Target.Market), Replicas: rec.Target.Replicas,
			Delta: delta(a), Reason: string(a.Reason), NeedsApproval: rec.Stage == StageAwaiting})
		needs[a.Workload] = needs[a.Workload] || rec.Stage == StageAwaiting
	}
	for _, w := range sortedKeys(by) {
		l.ann.publish(&events.PlanDecided{Meta: events.Meta{At: d.At}, Workload: w, PlanID: planID(d.At, w), Actions: by[w],
			USDPerHourWas: d.CostPerHourBefore, USDPerHourNow: d.CostPerHourAfter, NeedsApproval: needs[w]}, "workload", w)
	}
}

func delta(a placement.Action) int {
	if a.Kind == placement.ActionDrain {
		return -a.Count
	}
	if a.Kind == placement.ActionLaunch {
		return a.Count
	}
	return 0
}
