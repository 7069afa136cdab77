package arbiter

import (
	"context"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// The books' side of an action's call (actionBooks): the executor makes the call and judges how
// it went; the books find the action, record it as calling before the call and record the
// outcome after, in the book, durably, before it is announced.

// locationsToRun lists the locations where workload w has actions to run (none awaiting approval).
func (k *books) locationsToRun(w string) []locationToRun {
	var out []locationToRun
	k.with(func(l *ledger) { out = l.locationsToRun(w) })
	return out
}

func (l *ledger) locationsToRun(w string) []locationToRun {
	b := l.books[w]
	if b == nil {
		return nil
	}
	var out []locationToRun
	for _, r := range b.Actions {
		if r.Stage == StageAwaiting {
			continue
		}
		first := !r.Received.IsZero()
		i := slices.IndexFunc(out, func(x locationToRun) bool { return x.location == r.Target.Location })
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
func (k *books) begin(ctx context.Context, workload string, in func(Record) bool) (rec Record, resumed, ok bool) {
	k.with(func(l *ledger) { rec, resumed, ok = l.begin(workload, in) })
	if !ok {
		return rec, false, false
	}
	if err := k.flush(ctx, workload); err != nil {
		return rec, false, false
	}
	if _, valid := k.lease.valid(); !valid {
		return rec, false, false
	}
	return rec, resumed, true
}

// begin marks the workload's first action that in accepts as calling, in memory (books.begin).
func (l *ledger) begin(workload string, in func(Record) bool) (rec Record, resumed, ok bool) {
	b := l.books[workload]
	if !l.leading || b == nil {
		return rec, false, false
	}
	i := slices.IndexFunc(b.Actions, func(r Record) bool {
		return (r.Stage == StageRecorded || r.Stage == StageCalling) && in(r)
	})
	if i < 0 {
		return rec, false, false
	}
	r := &b.Actions[i]
	resumed = r.Stage == StageCalling
	r.Stage = StageCalling
	r.Tries++
	l.touch(b)
	return *r, resumed, true
}

// end records how the call went: done (the book drops drained replicas), given up (the book
// undoes the action's effect so the next plan tries elsewhere), or left to retry. The outcome is
// announced once it is durable. held says the book still held the action; more that the
// workload may have more to run now (an outcome announced).
func (k *books) end(ctx context.Context, workload string, rec Record, out callOutcome, callErr error, label string) (held, more bool) {
	var status events.ActionStatus
	var detail string
	var ok bool
	k.with(func(l *ledger) { status, detail, ok = l.settleCall(workload, rec, out, callErr) })
	if out == callGivenUp {
		label = "failed"
	}
	if !ok {
		return false, false
	}
	if err := k.flush(ctx, workload); err != nil || status == "" {
		return true, false
	}
	k.m.actions.WithLabelValues(rec.Target.Kind, label).Inc()
	if status == events.ActionApplied && !rec.Received.IsZero() {
		k.m.reaction.Observe(time.Since(rec.Received).Seconds())
	}
	k.ann.announce(rec, workload, status, detail)
	return true, true
}

// settleCall applies a call's outcome to the book and touches it. status is empty for a call
// left to retry; ok is false when the book is gone (not leading) or no longer holds the action.
func (l *ledger) settleCall(workload string, rec Record, out callOutcome, callErr error) (status events.ActionStatus, detail string, ok bool) {
	b := l.books[workload]
	if !l.leading || b == nil || b.record(rec.Target.ActionID) == nil {
		return "", "", false
	}
	l.truth.applied[rec.Target.Group] = l.reportSeq.Load()
	l.touch(b)
	switch out {
	case callApplied:
		l.ended(b, rec.Drain, l.clock.Now())
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
// did not.
func (l *ledger) ended(b *Book, drained []string, now time.Time) {
	for _, r := range b.Replicas {
		if r.Market != events.Spot || !slices.Contains(drained, r.ID) {
			continue
		}
		ob := placement.Observation{At: now, Kind: placement.ObsEnded, Lived: now.Sub(r.Since)}
		l.mk.learn(r.Offer, ob)
		l.resp.observe(r.Offer, ob)
	}
}
