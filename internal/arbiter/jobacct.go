package arbiter

import (
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// account brings the job's run up to now from the books: what its instances cost since the last
// account, the work its ready instance did (from the time it was first seen ready, less the
// checkpoint load), a reclaim (counted once; the work up to the notice is kept, as the instance
// checkpoints), and the progress the job reported itself when that is as new as the estimate or
// newer (each report once).
func (l *ledger) account(j *job, b *Book, now time.Time) {
	r := &j.Run
	if b != nil {
		for _, rep := range b.Replicas {
			if rep.State != abandoned {
				r.USDSpent += rep.PricePerHour * max(now.Sub(later(r.ChargedAt, rep.Since)), 0).Hours()
			}
		}
	}
	r.ChargedAt = now
	if rp := j.reported; rp != nil && !rp.At.Before(r.CreditedAt) && !rp.At.After(now) && !rp.At.Equal(j.applied) {
		j.applied = rp.At
		r.Done, r.CreditedAt = min(time.Duration(rp.WorkDoneS*float64(time.Second)), j.Spec.Workload.Job.Work), rp.At
		if r.Done >= j.Spec.Workload.Job.Work && r.FinishedAt.IsZero() {
			r.FinishedAt = rp.At
		}
	}
	l.credit(j, b, now)
	if r.Done >= j.Spec.Workload.Job.Work && r.State != events.JobFinished {
		r.State = events.JobFinished
	}
}

// credit counts the work of the instance the job runs on, and ends its count when the
// instance is reclaimed or gone.
func (l *ledger) credit(j *job, b *Book, now time.Time) {
	r, spec := &j.Run, j.Spec.Workload.Job
	var cur *Rep
	if b != nil {
		for i := range b.Replicas {
			if b.Replicas[i].ID == r.Replica {
				cur = &b.Replicas[i]
			}
		}
	}
	if cur == nil || cur.State == placement.StateReclaimed || cur.State == placement.StateDraining {
		if cur != nil && cur.State == placement.StateReclaimed {
			r.Preemptions++
		}
		if cur != nil {
			creditWork(j, now) // it ran until the notice (or the drain): the checkpoint keeps it
		}
		r.Replica, r.ReadyAt = "", time.Time{}
		cur = liveReplica(b)
		if cur == nil {
			return
		}
		r.Replica = cur.ID
	}
	r.Location, r.Market, r.Price = cur.Location, cur.Market, cur.PricePerHour
	if r.StartedAt.IsZero() {
		// The first instance: launched at Since. A run saved before StartedAt was kept had done
		// Done already, which took at least as long.
		r.StartedAt = cur.Since.Add(-r.Done)
	}
	if cur.State == placement.StateReady && r.ReadyAt.IsZero() {
		r.ReadyAt = now
		r.Lost += now.Sub(cur.Since) + spec.Overhead
	}
	creditWork(j, now)
}

// creditWork credits the counted instance's productive time up to now: from its ready time plus the
// checkpoint load, never past the job's work. It records when the work was done.
func creditWork(j *job, now time.Time) {
	r, spec := &j.Run, j.Spec.Workload.Job
	if r.ReadyAt.IsZero() {
		return
	}
	from := later(r.CreditedAt, r.ReadyAt.Add(spec.Overhead))
	if !now.After(from) {
		return
	}
	got := min(now.Sub(from), spec.Work-r.Done)
	r.Done += got
	r.CreditedAt = now
	if r.Done >= spec.Work && r.FinishedAt.IsZero() {
		r.FinishedAt = from.Add(got)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// tell publishes the job's state when it changed (state, place, preemptions), and its estimated
// progress while it runs; publishing does not wait.
func (l *ledger) tell(j *job, b *Book, now time.Time) {
	r := &j.Run
	switch {
	case r.Ended():
	case liveReplica(b) != nil:
		r.State = events.JobRunning
	case reclaimedReplica(b) != nil:
		r.State = events.JobCheckpointing
	case r.State != events.JobSubmitted || r.Done > 0:
		r.State = events.JobWaiting
	}
	if r.State == events.JobWaiting || r.Ended() {
		r.Location, r.Market, r.Price = "", "", 0
	}
	e := l.jobState(j, now)
	if e.State != j.told.State || e.Location != j.told.Location || e.Market != j.told.Market ||
		e.Preemptions != j.told.Preemptions || e.WorkDoneS != j.told.WorkDoneS && r.Ended() {
		l.ann.publish(e, "job", e.Job)
		j.told = *e
	}
	if r.Location != "" && r.CreditedAt.Equal(now) {
		p := &events.JobProgress{Meta: events.Meta{At: now}, Job: e.Job, WorkDoneS: r.Done.Seconds(),
			Location: r.Location, Market: r.Market, Estimated: true}
		l.ann.publish(p, "job", e.Job)
	}
	signal(l.jobsSave)
}

// jobState is the job.state event of the job as it stands.
func (l *ledger) jobState(j *job, now time.Time) *events.JobState {
	r, w := j.Run, j.Spec.Workload
	e := &events.JobState{Meta: events.Meta{At: now}, Job: w.Name, Team: w.Team, State: r.State,
		WorkS: w.Job.Work.Seconds(), WorkDoneS: r.Done.Seconds(), Deadline: j.Spec.Deadline(),
		OverheadS: w.Job.Overhead.Seconds(), Location: r.Location, Market: r.Market, GPUs: w.GPU.Count,
		USDPerHour: r.Price, OnDemandUSD: r.OnDemand, USDSpent: r.USDSpent, Preemptions: r.Preemptions, LostS: r.Lost.Seconds(), Reason: r.Reason}
	if !r.FinishedAt.IsZero() {
		at := r.FinishedAt
		e.FinishedAt = &at
	}
	return e
}

// jobProgress takes a job.progress the job published itself; the arbiter's own estimates come
// back on the same subject and are skipped. One that claims more work than the job can have
// done by then is refused (checkProgress) and never taken.
func (l *ledger) jobProgress(e *events.JobProgress) error {
	if e.Estimated {
		return nil
	}
	j := l.jobs[e.Job]
	if j == nil {
		return nil
	}
	if err := checkProgress(j, e, l.clock.Now()); err != nil {
		l.m.refused.WithLabelValues(string(e.EventType()), "implausible").Inc()
		return err
	}
	if j.reported == nil || e.At.After(j.reported.At) {
		j.reported = e
	}
	return nil
}
