package arbiter

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// maxTries is how often an action is tried before it is given up as failed.
const maxTries = 5

// step runs the workload's first runnable action, in any location, through its life once. It
// reports whether the workload may have more to run now.
func (s *Service) step(ctx context.Context, workload string) bool {
	more, _ := s.run(ctx, workload, func(Record) bool { return true })
	return more
}

// stepAt is step for the workload's actions in one location (see lanes). wait is how long the
// actuator asked to be left alone before the next try (Retry-After), 0 when it did not ask.
func (s *Service) stepAt(ctx context.Context, workload, location string) (more bool, wait time.Duration) {
	return s.run(ctx, workload, func(r Record) bool { return r.Target.Location == location })
}

// run takes the workload's first runnable action that in accepts through its life once.
func (s *Service) run(ctx context.Context, workload string, in func(Record) bool) (more bool, wait time.Duration) {
	rec, resumed, ok := s.begin(ctx, workload, in)
	if !ok {
		return false, 0
	}
	if _, valid := s.lease.valid(); !valid {
		return false, 0 // deposed between recording and calling: the successor resumes it
	}
	if resumed && s.alreadyApplied(ctx, rec) {
		return s.end(ctx, workload, rec, nil, "reconciled"), 0
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	err := s.o.Actuator.Scale(cctx, rec.Target)
	cancel()
	return s.end(ctx, workload, rec, err, "applied"), askedWait(err)
}

// begin picks the workload's first action that in accepts and that is not waiting for approval,
// and records, durably, that its actuator is about to be called. resumed says the action was
// already marked calling: an earlier call may have gone through.
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
	return rec, resumed, true
}

// alreadyApplied asks the actuator whether an interrupted call went through.
func (s *Service) alreadyApplied(ctx context.Context, rec Record) bool {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, err := s.o.Actuator.Desired(cctx, rec.Target.Group)
	return err == nil && n == rec.Target.Replicas
}

// end records how the call went: done (the book drops drained replicas), failed for good (the
// book undoes the action's effect so the next plan tries elsewhere), or left to retry. The
// outcome is announced once it is durable.
func (s *Service) end(ctx context.Context, workload string, rec Record, callErr error, outcome string) bool {
	status, detail, failed, ok := s.settleCall(workload, rec, callErr)
	if failed {
		outcome = "failed"
	}
	if !ok {
		return false
	}
	if err := s.flush(ctx, workload); err != nil || status == "" {
		return false
	}
	s.m.actions.WithLabelValues(rec.Target.Kind, outcome).Inc()
	if status == events.ActionApplied && !rec.Received.IsZero() {
		s.m.reaction.Observe(time.Since(rec.Received).Seconds())
	}
	s.announce(rec, workload, status, detail)
	return true
}

// settleCall applies a call's outcome to the book and touches it. status is empty for a call
// left to retry, failed says the action failed for good; ok is false when the book is gone (not
// leading) or no longer holds the action.
func (s *Service) settleCall(workload string, rec Record, callErr error) (status events.ActionStatus, detail string, failed, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[workload]
	if !s.leading || b == nil || b.record(rec.Target.ActionID) == nil {
		return "", "", false, false
	}
	s.truth.applied[rec.Target.Group] = s.reportSeq.Load()
	s.touch(b)
	switch {
	case callErr == nil:
		s.ended(b, rec.Drain, s.o.Clock.Now())
		b.Replicas = slices.DeleteFunc(b.Replicas, func(r Rep) bool { return slices.Contains(rec.Drain, r.ID) })
		b.finish(rec.Target.ActionID)
		return events.ActionApplied, "", false, true
	case errors.Is(callErr, actuate.ErrNotFound) || rec.Tries >= maxTries:
		undo(b, rec)
		b.finish(rec.Target.ActionID)
		return events.ActionFailed, callErr.Error(), true, true
	default:
		b.record(rec.Target.ActionID).LastError = callErr.Error()
		s.log.Warn("actuator call failed; will retry", "action", rec.Target.ActionID, "group", rec.Target.Group.String(),
			"try", rec.Tries, "err", callErr)
		s.m.actions.WithLabelValues(rec.Target.Kind, "retried").Inc()
		return "", "", false, true
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
