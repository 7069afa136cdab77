package arbiter

import (
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// announce publishes an action's step as action.updated. Publishing is asynchronous: the book in
// the placement bucket is the record the arbiter resumes from, and the event, whose id is derived
// from the action and the step, is the audit trail (a re-sent step is dropped as a duplicate).
func (s *Service) announce(rec Record, workload string, st events.ActionStatus, detail string) {
	s.announceBy(rec, workload, st, "arbiter/"+s.o.Identity, detail)
}

// announceBy announces a step someone else took: an approval's decision, by the Slack user who
// decided or "timeout", as the approvals announce the same step.
func (s *Service) announceBy(rec Record, workload string, st events.ActionStatus, actor, detail string) {
	e := &events.ActionUpdated{Meta: events.Meta{At: s.o.Clock.Now()}, Workload: workload, ActionID: rec.Target.ActionID,
		PlanID: rec.PlanID, Status: st, Kind: rec.Target.Kind, Location: rec.Target.Location, Offer: rec.Target.Offer,
		Market: marketOr(rec.Target.Market), Replicas: rec.Target.Replicas, Reason: rec.Target.Reason,
		Actor: actor, Detail: detail}
	// The id names the action and the step, not the time: a step re-announced after a restart is
	// the same fact.
	e.ID = events.ID(&events.ActionUpdated{Workload: workload, ActionID: rec.Target.ActionID, Status: st})
	if _, err := s.pub.PublishAsync(e); err != nil {
		s.log.Warn("could not publish action.updated", "action", rec.Target.ActionID, "err", err)
	}
}

func marketOr(m events.Market) events.Market {
	if m == "" {
		return events.OnDemand
	}
	return m
}

// decided publishes one plan.decided per workload the decision acts on.
func (s *Service) decided(d placement.Decision) {
	by := map[string][]events.PlanAction{}
	needs := map[string]bool{}
	for _, a := range d.Actions {
		b := s.books[a.Workload]
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
		e := &events.PlanDecided{Meta: events.Meta{At: d.At}, Workload: w, PlanID: planID(d.At, w), Actions: by[w],
			USDPerHourWas: d.CostPerHourBefore, USDPerHourNow: d.CostPerHourAfter, NeedsApproval: needs[w]}
		if _, err := s.pub.PublishAsync(e); err != nil {
			s.log.Warn("could not publish plan.decided", "workload", w, "err", err)
		}
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
