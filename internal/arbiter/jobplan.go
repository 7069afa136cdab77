package arbiter

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Reasons of the actions the job planner takes.
const (
	reasonJobStart  placement.Reason = "job_start"  // the job begins, or resumes after waiting or a reclaim
	reasonJobMove   placement.Reason = "job_move"   // the deadline planner chose another place or market
	reasonJobWait   placement.Reason = "job_wait"   // nothing is worth running on until the next decision
	reasonJobDone   placement.Reason = "job_done"   // the work is done
	reasonJobCancel placement.Reason = "job_cancel" // someone cancelled the job
)

// KindCheckpoint is the Target kind of a checkpoint request: a reclaim notice reached one of a
// job's instances, which should save its progress before the instance goes. It changes no count.
const KindCheckpoint = actuate.KindCheckpoint

// planJobs decides, for every active job, where it runs until the next decision, and returns the
// actions that take it there; s.mu is held. They join the pass's decision, so they go through the
// same gate (budgets, approvals) as replicas' and share their capacity. A job with a launch or a
// stop in flight waits for it to land before it is planned again; a checkpoint, or the retire of
// an instance already lost (reclaimed, or a launch given up for want of capacity), does not hold
// it: the job is placed again in the same pass.
func (s *Service) planJobs(now time.Time) []placement.Action {
	act := s.activeJobs()
	if len(act) == 0 {
		return nil
	}
	snap := s.jobSnapshot(now)
	var out []placement.Action
	for _, j := range act {
		b := s.books[j.Spec.Workload.Name]
		s.account(j, b, now)
		if b != nil && slices.ContainsFunc(b.Actions, moving) {
			continue
		}
		out = append(out, s.planJob(j, b, &snap, now)...)
		s.tell(j, b, now)
	}
	return out
}

// moving says whether r launches or stops an instance (a retire or a checkpoint does neither).
func moving(r Record) bool {
	return r.Target.Kind == string(placement.ActionLaunch) || r.Target.Kind == string(placement.ActionDrain)
}

// jobSnapshot is the market as the serving planner sees it, with the jobs' replicas added, so
// hazards and launch chances count the capacity jobs hold.
func (s *Service) jobSnapshot(now time.Time) placement.Snapshot {
	snap := s.snapshot(now, nil)
	for _, w := range s.workloadNames() {
		if !s.isJob(w) {
			continue
		}
		for _, r := range s.books[w].Replicas {
			snap.Replicas = append(snap.Replicas, placement.Replica{ID: r.ID, Workload: w, Offer: r.Offer,
				State: r.State, Since: r.Since, Deadline: r.Deadline})
		}
	}
	return snap
}

// planJob turns the deadline planner's choice for one job into actions. A move stops the old
// instance before the new one starts (retire-then-launch, in that order in one workload's queue):
// a job's progress lives in its checkpoint, so a second instance would pay to redo work the
// first is still checkpointing, and JOBS.md bills a switch as one changeover, with no overlap.
func (s *Service) planJob(j *job, b *Book, snap *placement.Snapshot, now time.Time) []placement.Action {
	name := j.Spec.Workload.Name
	live := liveReplica(b)
	stop := func(why placement.Reason) []placement.Action {
		if live == nil {
			return nil
		}
		return []placement.Action{{ID: jobActionID(name, "drain", live.ID, now), Kind: placement.ActionDrain, Workload: name,
			Offer: live.Offer, Count: 1, Replicas: []string{live.ID}, Reason: why, CostPerHour: -live.PricePerHour}}
	}
	switch {
	case j.Spec.Cancelled:
		j.Run.State, j.Run.Reason = "cancelled", "cancelled by "+j.Spec.By
		return stop(reasonJobCancel)
	case j.Run.Done >= j.Spec.Workload.Job.Work:
		return stop(reasonJobDone)
	}
	w := workload(&j.Spec.Workload)
	est := placement.Estimates(snap, &w, s.o.Policy, now)
	j.Run.OnDemand = cheapestOnDemand(est)
	view, offers := s.jobView(j, b, live, est, now)
	choice := placement.PlanJob(view, offers)
	switch {
	case choice == view.Running && live != nil:
		return nil
	case choice < 0:
		return stop(reasonJobWait)
	}
	o := est[choice].Offer
	why := reasonJobStart
	if live != nil {
		why = reasonJobMove
	}
	launch := placement.Action{ID: jobActionID(name, "launch", o.ID, now), Kind: placement.ActionLaunch, Workload: name,
		Offer: o.ID, Count: 1, Reason: why, CostPerHour: o.PricePerHour}
	return append(stop(reasonJobMove), launch)
}

// jobView is what the deadline planner knows of the job now, and the offers it may run on.
func (s *Service) jobView(j *job, b *Book, live *Rep, est []placement.Estimate, now time.Time) (placement.JobView, []placement.JobOffer) {
	spec := j.Spec.Workload.Job
	overhead := spec.Overhead + j.Spec.Workload.ColdStart
	v := placement.JobView{Work: spec.Work, Done: j.Run.Done, Elapsed: now.Sub(j.Spec.SubmittedAt),
		Deadline: j.Spec.Deadline().Sub(j.Spec.SubmittedAt), Overhead: overhead, Tick: s.o.Interval, Running: -1, Last: -1}
	offers := make([]placement.JobOffer, len(est))
	for i, e := range est {
		m, uptime := e.Offer.Market, 1.0
		if m == placement.MarketReserved {
			m = placement.MarketOnDemand
		}
		if m == placement.MarketSpot {
			uptime = e.LaunchChance
		}
		offers[i] = placement.JobOffer{Location: e.Offer.Location, Market: m, PricePerHour: e.Offer.PricePerHour,
			Available: e.Usable && !lostLately(e.Offer.History, now, s.o.Interval), Hazard: e.Hazard, Uptime: uptime}
		if live != nil && e.Offer.ID == live.Offer {
			v.Running = i
		}
	}
	j.spells.see(slices.ContainsFunc(offers, func(o placement.JobOffer) bool { return o.Market == placement.MarketSpot && o.Available }), now)
	v.Outage, v.Outages, v.SpotFor, v.SpotRuns, v.History = j.spells.view(now)
	if live != nil {
		v.Pending = pending(live, j, overhead, now)
		return v, offers
	}
	if lost := reclaimedReplica(b); lost != nil {
		v.Preempted = true
		v.Last = slices.IndexFunc(est, func(e placement.Estimate) bool { return e.Offer.ID == lost.Offer })
	}
	return v, offers
}

// lostLately says whether the offer had no capacity at the last decision or since: a launch
// there found none (given up when the next report says so, dated at the launch) or an instance
// there was reclaimed. The planner's launch chance forgets such
// a loss only over its half-life; a job asking again at once would sit a whole interval on a
// launch that cannot come, where the deadline planner, told the offer is not available now,
// waits or takes another.
func lostLately(h []placement.Observation, now time.Time, within time.Duration) bool {
	return slices.ContainsFunc(h, func(o placement.Observation) bool {
		age := now.Sub(o.At)
		return (o.Kind == placement.ObsLaunchFailed || o.Kind == placement.ObsPreempted) && age >= 0 && age <= within
	})
}

// pending is the overhead the running instance has still to burn: the rest of its launch and
// checkpoint load.
func pending(r *Rep, j *job, overhead time.Duration, now time.Time) time.Duration {
	if r.State == placement.StateReady && !j.Run.ReadyAt.IsZero() && j.Run.Replica == r.ID {
		return max(j.Run.ReadyAt.Add(j.Spec.Workload.Job.Overhead).Sub(now), 0)
	}
	return max(r.Since.Add(overhead).Sub(now), j.Spec.Workload.Job.Overhead)
}

// cheapestOnDemand is the lowest price per hour of the offers that are not spot, 0 when none.
func cheapestOnDemand(est []placement.Estimate) float64 {
	p := 0.0
	for _, e := range est {
		if e.Offer.Market != placement.MarketSpot && (p == 0 || e.Offer.PricePerHour < p) {
			p = e.Offer.PricePerHour
		}
	}
	return p
}

// liveReplica is the job's instance that runs or is starting, nil when none.
func liveReplica(b *Book) *Rep {
	if b == nil {
		return nil
	}
	for i := range b.Replicas {
		if st := b.Replicas[i].State; st == placement.StateReady || st == placement.StateLaunching {
			return &b.Replicas[i]
		}
	}
	return nil
}

// reclaimedReplica is the job's instance under a reclaim notice, nil when none.
func reclaimedReplica(b *Book) *Rep {
	if b == nil {
		return nil
	}
	for i := range b.Replicas {
		if b.Replicas[i].State == placement.StateReclaimed {
			return &b.Replicas[i]
		}
	}
	return nil
}

// checkpoints asks each job whose instance a reclaim notice reached to checkpoint, once per
// instance, before anything else of the job runs: the move the next plan makes resumes from it.
// s.mu is held.
func (s *Service) checkpoints(now time.Time, dirty map[string]bool) {
	for _, w := range s.workloadNames() {
		if !s.isJob(w) {
			continue
		}
		b := s.books[w]
		for _, r := range b.Replicas {
			id := jobActionID(w, KindCheckpoint, r.ID, time.Time{})
			if r.State != placement.StateReclaimed || b.finished(id) {
				continue
			}
			g := r.group(w)
			b.Actions = append(b.Actions, Record{Target: actuate.Target{ActionID: id, Group: g, Offer: r.Offer,
				Replicas: b.Count(g), Kind: KindCheckpoint, Reason: string(placement.ReasonReclaim)},
				PlanID: planID(now, w), Stage: StageRecorded, At: now})
			s.announce(b.Actions[len(b.Actions)-1], w, statusOf(StageRecorded), "reclaim notice on "+r.ID+": checkpoint before "+
				r.Deadline.Format(time.RFC3339))
			dirty[w] = true
		}
	}
}

// jobActionID names a job's action: the same job, step, subject and time give the same id.
func jobActionID(job, step, subject string, at time.Time) string {
	h := fnv.New128a()
	h.Write([]byte("job\x00" + job + "\x00" + step + "\x00" + subject + "\x00" + at.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(h.Sum(nil))
}
