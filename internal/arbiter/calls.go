package arbiter

import (
	"context"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// The books' side of an action's call (actionBooks): the executor makes the call and judges how
// it went; the Service finds the action, records it as calling before the call and records the
// outcome after, in the book, durably, before announcing it.

// locationsToRun lists the locations where workload w has actions to run (none awaiting approval).
func (s *Service) locationsToRun(w string) []locationToRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[w]
	if b == nil {
		return nil
	}
	var out []locationToRun
	for _, r := range b.Actions {
		if r.Stage == StageAwaiting {
			continue
		}
		first := !r.Received.IsZero()
		i := slices.IndexFunc(out, func(l locationToRun) bool { return l.location == r.Target.Location })
		if i < 0 {
			out = append(out, locationToRun{location: r.Target.Location, first: first})
		} else {
			out[i].first = out[i].first || first
		}
	}
	return out
}

// begin picks the workload's first action that in accepts and that is not waiting for approval,
// and records, durably, that its actuator is about to be called. resumed says the action was
// already marked calling: an earlier call may have gone through. ok is false when there is no
// such action, or when this arbiter was deposed between recording and calling: the successor
// resumes it.
func (s *Service) begin(ctx context.Context, workload string, in func(Record) bool) (rec Record, resumed, ok bool) {
	s.mu.Lock()
	b := s.books[workload]
	if !s.leading || b == nil {
		s.mu.Unlock()
		return rec, false, false
	}
	i := slices.IndexFunc(b.Actions, func(r Record) bool {
		return (r.Stage == StageRecorded || r.Stage == StageCalling) && in(r)
	})
	if i < 0 {
		s.mu.Unlock()
		return rec, false, false
	}
	r := &b.Actions[i]
	resumed = r.Stage == StageCalling
	r.Stage = StageCalling
	r.Tries++
	rec = *r
	s.touch(b)
	s.mu.Unlock()
	if err := s.flush(ctx, workload); err != nil {
		return rec, false, false
	}
	if _, valid := s.lease.valid(); !valid {
		return rec, false, false
	}
	return rec, resumed, true
}

// end records how the call went: done (the book drops drained replicas), given up (the book
// undoes the action's effect so the next plan tries elsewhere), or left to retry. The outcome is
// announced once it is durable. held says the book still held the action; more that the
// workload may have more to run now (an outcome announced).
func (s *Service) end(ctx context.Context, workload string, rec Record, out callOutcome, callErr error, label string) (held, more bool) {
	status, detail, ok := s.settleCall(workload, rec, out, callErr)
	if out == callGivenUp {
		label = "failed"
	}
	if !ok {
		return false, false
	}
	if err := s.flush(ctx, workload); err != nil || status == "" {
		return true, false
	}
	s.m.actions.WithLabelValues(rec.Target.Kind, label).Inc()
	if status == events.ActionApplied && !rec.Received.IsZero() {
		s.m.reaction.Observe(time.Since(rec.Received).Seconds())
	}
	s.announce(rec, workload, status, detail)
	return true, true
}

// settleCall applies a call's outcome to the book and touches it. status is empty for a call
// left to retry; ok is false when the book is gone (not leading) or no longer holds the action.
func (s *Service) settleCall(workload string, rec Record, out callOutcome, callErr error) (status events.ActionStatus, detail string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[workload]
	if !s.leading || b == nil || b.record(rec.Target.ActionID) == nil {
		return "", "", false
	}
	s.truth.applied[rec.Target.Group] = s.reportSeq.Load()
	s.touch(b)
	switch out {
	case callApplied:
		s.ended(b, rec.Drain, s.o.Clock.Now())
		b.Replicas = slices.DeleteFunc(b.Replicas, func(r Rep) bool { return slices.Contains(rec.Drain, r.ID) })
		b.finish(rec.Target.ActionID)
		return events.ActionApplied, "", true
	case callGivenUp:
		undo(b, rec)
		b.finish(rec.Target.ActionID)
		return events.ActionFailed, callErr.Error(), true
	default:
		b.record(rec.Target.ActionID).LastError = callErr.Error()
		return "", "", true
	}
}

// undo reverses what enacting rec did to the book.
func undo(b *Book, rec Record) {
	launched := map[string]bool{}
	for _, r := range rec.Launch {
		launched[r.ID] = true
	}
	b.Replicas = slices.DeleteFunc(b.Replicas, func(r Rep) bool { return launched[r.ID] })
	for i := range b.Replicas {
		if slices.Contains(rec.Drain, b.Replicas[i].ID) {
			b.Replicas[i].State = placement.StateReady
		}
	}
}

// ended records, for the planner's hazard, how long each drained spot replica survived until
// now: a replica that ends on our terms is evidence the offer held, as a preemption is evidence it
// did not. s.mu is held.
func (s *Service) ended(b *Book, drained []string, now time.Time) {
	for _, r := range b.Replicas {
		if r.Market != events.Spot || !slices.Contains(drained, r.ID) {
			continue
		}
		ob := placement.Observation{At: now, Kind: placement.ObsEnded, Lived: now.Sub(r.Since)}
		s.mk.learn(r.Offer, ob)
		s.newObs = append(s.newObs, placement.OfferObservation{Offer: r.Offer, Observation: ob})
	}
}
