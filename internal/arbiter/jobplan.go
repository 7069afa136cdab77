package arbiter

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
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

// planJobs decides, for each of the active jobs act (activeJobs, or some of them), where it runs
// until the next decision, and returns the actions that take it there. They join the pass's
// decision, so they go through the same gate (budgets, approvals) as replicas' and share their
// capacity. A job with a launch or a stop in flight waits for it to land before it is planned
// again; a checkpoint, or the retire of an instance already lost (reclaimed, or a launch given up
// for want of capacity), does not hold it: the job is placed again in the same pass.
func (l *ledger) planJobs(act []*job, now time.Time) []placement.Action {
	if len(act) == 0 {
		return nil
	}
	snap := l.jobSnapshot(now)
	var out []placement.Action
	for _, j := range act {
		b := l.books[j.Spec.Workload.Name]
		l.account(j, b, now)
		if b != nil && slices.ContainsFunc(b.Actions, moving) {
			continue
		}
		l.m.jobPlans.Inc()
		out = append(out, l.planJob(j, b, &snap, now)...)
		l.tell(j, b, now)
	}
	return out
}

// moving says whether r launches or stops an instance (a retire or a checkpoint does neither).
func moving(r Record) bool {
	return r.Target.Kind == string(placement.ActionLaunch) || r.Target.Kind == string(placement.ActionDrain)
}

// jobSnapshot is the market as the serving planner sees it, with the jobs' replicas added, so
// hazards and launch chances count the capacity jobs hold.
func (l *ledger) jobSnapshot(now time.Time) placement.Snapshot {
	snap := l.snapshot(now, nil)
	for _, w := range l.workloadNames() {
		if !l.isJob(w) {
			continue
		}
		for _, r := range l.books[w].Replicas {
			snap.Replicas = append(snap.Replicas, placement.Replica{ID: r.ID, Workload: w, Offer: r.Offer,
				State: r.State, Since: r.Since, Deadline: r.Deadline})
		}
	}
	return snap
}

// planJob turns the deadline planner's choice for one job into actions. A move while the old
// instance still runs is make-before-break: it launches the new instance alone, and the old one
// is retired only once the actuator reports that the new one got capacity (settleMove, at a later
// pass). A launch given up for want of capacity (giveUp) then leaves the old instance running, so
// a move that finds no capacity costs nothing but the try. That is what a job on on-demand needs:
// it learns that spot is back only by trying it, and a move that stopped on-demand first paid an
// idle tick and a new on-demand changeover for every try that found none. The new instance
// resumes from the checkpoint the old one leaves when it is retired; the time both are held is
// paid, and kept to one report. Where the old instance is already lost (reclaimed), nothing of the
// job runs and the move is a plain launch.
func (l *ledger) planJob(j *job, b *Book, snap *placement.Snapshot, now time.Time) []placement.Action {
	name := j.Spec.Workload.Name
	lives := liveReplicas(b)
	switch {
	case j.Spec.Cancelled:
		j.Run.State, j.Run.Reason = "cancelled", "cancelled by "+j.Spec.By
		return stopJob(name, lives, reasonJobCancel, now)
	case j.Run.Done >= j.Spec.Workload.Job.Work:
		return stopJob(name, lives, reasonJobDone, now)
	case len(lives) > 1:
		return l.settleMove(b, lives, now)
	}
	var live *Rep
	if len(lives) == 1 {
		live = lives[0]
	}
	w := workload(&j.Spec.Workload)
	est := placement.Estimates(snap, &w, l.policy, now)
	j.Run.OnDemand = cheapestOnDemand(est)
	view, offers := l.jobView(j, b, live, est, now)
	choice := placement.PlanJob(view, offers)
	if choice < 0 && live == nil {
		choice = l.tryWhileWaiting(view, offers, est, now)
	}
	switch {
	case choice == view.Running && live != nil:
		return nil
	case choice < 0:
		return stopJob(name, lives, reasonJobWait, now)
	}
	o := est[choice].Offer
	why := reasonJobStart
	if live != nil {
		why = reasonJobMove
	}
	return []placement.Action{{ID: jobActionID(name, "launch", o.ID, now), Kind: placement.ActionLaunch, Workload: name,
		Offer: o.ID, Count: 1, Reason: why, CostPerHour: o.PricePerHour}}
}

// stopJob drains the job's instances reps.
func stopJob(name string, reps []*Rep, why placement.Reason, now time.Time) []placement.Action {
	var out []placement.Action
	for _, r := range reps {
		out = append(out, placement.Action{ID: jobActionID(name, "drain", r.ID, now), Kind: placement.ActionDrain, Workload: name,
			Offer: r.Offer, Count: 1, Replicas: []string{r.ID}, Reason: why, CostPerHour: -r.PricePerHour})
	}
	return out
}

// settleMove carries on a make-before-break move (lives, oldest first, the newest launched by the
// move): once the actuator reports that the newest got capacity, the older ones are retired.
// Until then nothing changes: the old instance goes on working, and a launch given up leaves it
// alone in the book, to be planned afresh.
func (l *ledger) settleMove(b *Book, lives []*Rep, now time.Time) []placement.Action {
	if !l.gotCapacity(b, lives[len(lives)-1]) {
		return nil
	}
	return stopJob(b.Workload, lives[:len(lives)-1], reasonJobMove, now)
}

// gotCapacity says whether the actuator reports replica r running or starting: it is ready, or a
// report made since its launch holds its group's count with nothing pending.
func (l *ledger) gotCapacity(b *Book, r *Rep) bool {
	if r.State == placement.StateReady {
		return true
	}
	g := r.group(b.Workload)
	n := b.Count(g)
	return l.mk.runsSince(g, r.Since, n)
}

// jobView is what the deadline planner knows of the job now, and the offers it may run on.
func (l *ledger) jobView(j *job, b *Book, live *Rep, est []placement.Estimate, now time.Time) (placement.JobView, []placement.JobOffer) {
	spec := j.Spec.Workload.Job
	overhead := spec.Overhead + j.Spec.Workload.ColdStart
	v := placement.JobView{Work: spec.Work, Done: j.Run.Done, Elapsed: now.Sub(j.Spec.SubmittedAt),
		Deadline: j.Spec.Deadline().Sub(j.Spec.SubmittedAt), Overhead: overhead, Tick: l.interval, Running: -1, Last: -1}
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
			Available: placement.MayTry(e, live != nil, now, l.interval), Hazard: e.Hazard, Uptime: uptime}
		if live != nil && e.Offer.ID == live.Offer {
			v.Running = i
		}
	}
	spotRuns := live != nil && live.Market == events.Spot && live.State == placement.StateReady
	j.spells.See(placement.Sight(spotRuns, est, now, l.interval), now)
	j.spells.Fill(&v, now)
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

// tryWhileWaiting is the spot offer a job the planner has wait tries anyway, -1 for none. A launch
// that finds no capacity leaves the job as idle as waiting does, and costs one report, so the
// spot offers kept from an idle job (unlikely ones) are offered as to a job whose instance runs,
// and the planner's answer is taken when it is one of them.
func (l *ledger) tryWhileWaiting(view placement.JobView, offers []placement.JobOffer, est []placement.Estimate, now time.Time) int {
	free := slices.Clone(offers)
	for i := range free {
		if free[i].Market == placement.MarketSpot {
			free[i].Available = placement.MayTry(est[i], true, now, l.interval)
		}
	}
	if c := placement.PlanJob(view, free); c >= 0 && free[c].Market == placement.MarketSpot {
		return c
	}
	return -1
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

// liveReplica is the job's instance whose work counts while no other takes over: the oldest
// that runs or is starting, nil when none.
func liveReplica(b *Book) *Rep {
	if lives := liveReplicas(b); len(lives) > 0 {
		return lives[0]
	}
	return nil
}

// liveReplicas are the job's instances that run or are starting, oldest first: two while a move
// waits for its new instance to get capacity.
func liveReplicas(b *Book) []*Rep {
	if b == nil {
		return nil
	}
	var out []*Rep
	for i := range b.Replicas {
		if st := b.Replicas[i].State; st == placement.StateReady || st == placement.StateLaunching {
			out = append(out, &b.Replicas[i])
		}
	}
	slices.SortStableFunc(out, func(x, y *Rep) int { return x.Since.Compare(y.Since) })
	return out
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
func (l *ledger) checkpoints(now time.Time, dirty map[string]bool) {
	for _, w := range l.workloadNames() {
		if !l.isJob(w) {
			continue
		}
		b := l.books[w]
		for _, r := range b.Replicas {
			id := jobActionID(w, KindCheckpoint, r.ID, time.Time{})
			if r.State != placement.StateReclaimed || b.finished(id) {
				continue
			}
			g := r.group(w)
			b.Actions = append(b.Actions, Record{Target: actuate.Target{ActionID: id, Group: g, Offer: r.Offer,
				Replicas: b.Count(g), Kind: KindCheckpoint, Reason: string(placement.ReasonReclaim)},
				PlanID: planID(now, w), Stage: StageRecorded, At: now})
			l.ann.announce(b.Actions[len(b.Actions)-1], w, statusOf(StageRecorded), "reclaim notice on "+r.ID+": checkpoint before "+
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
