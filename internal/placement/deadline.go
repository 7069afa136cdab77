package placement

import "time"

// JobView is what the deadline planner knows of one job at one decision.
type JobView struct {
	Work     time.Duration // C0: compute the job needs on one replica
	Done     time.Duration // W: work done (checkpointed progress)
	Elapsed  time.Duration // t: time since the job's start (submission)
	Deadline time.Duration // D: the deadline, from the job's start
	Overhead time.Duration // d: time lost to each (re)launch (loading the checkpoint)
	Pending  time.Duration // r: overhead the running instance has still to burn
	Tick     time.Duration // g: time until the next decision
	Running  int           // index in offers of what runs now; -1 when nothing runs
	// Preempted says the instance that ran until now was just reclaimed (JOBS.md's prev = spot
	// with nothing running); Last is the index of the offer it ran on, -1 when none.
	Preempted bool
	Last      int
}

// JobOffer is one place and market the job may run on for the next tick.
type JobOffer struct {
	Location     string
	Market       Market // MarketSpot, MarketOnDemand (reserved counts as on-demand)
	PricePerHour float64
	Available    bool    // capacity can be had now (spot: the trace / launch history says so)
	Hazard       float64 // estimated reclaims per hour while running (0 for on-demand)
	// Uptime is the estimated share of time spot capacity is available here, in [0,1]
	// (1 for on-demand); the planner uses it to judge waiting.
	Uptime float64
}

// PlanJob returns the index in offers to run the job on for the next tick, or -1 to wait.
// It never misses a deadline on-demand could still meet: when waiting or spot would leave
// too little time, it chooses on-demand (JOBS.md step 4 is part of it).
func PlanJob(v JobView, offers []JobOffer) int {
	if v.Done >= v.Work {
		return -1
	}
	od := cheapestOnDemand(offers)
	if od >= 0 && mustRunOnDemand(v) {
		if v.Running >= 0 && !isSpot(offers[v.Running]) {
			return v.Running
		}
		return od
	}
	return planUniform(v, offers, od)
}

// mustRunOnDemand says whether anything but on-demand could leave too little time: after one
// more tick with no progress, an on-demand launch (overhead included) must still fit in the
// whole ticks left before the deadline. The extra tick beyond JOBS.md's step 4 keeps the
// simulator's step 4 from ever firing on a job that sits on spot, where its quirk (a reclaimed
// spot instance with no overhead left asks for spot again) would cost an idle tick the job may
// not have.
func mustRunOnDemand(v JobView) bool {
	g := max(v.Tick, time.Nanosecond)
	left := v.Work - v.Done
	return ceilTicks(left+v.Overhead, g)+1 >= int64((v.Deadline-v.Elapsed)/g)
}

// ceilTicks is the number of ticks of length g that x takes, rounded up.
func ceilTicks(x, g time.Duration) int64 {
	if x <= 0 {
		return 0
	}
	return int64((x + g - 1) / g)
}

// planUniform is Uniform Progress (JOBS.md) over many offers: spot whenever some is available,
// on-demand when the job has fallen behind the straight line from 0 to Work at Deadline, wait
// otherwise; a job on on-demand leaves it for spot only once it is ahead by two changeovers.
func planUniform(v JobView, offers []JobOffer, od int) int {
	onOD := v.Running >= 0 && !isSpot(offers[v.Running])
	if v.Running >= 0 && isSpot(offers[v.Running]) && offers[v.Running].Available {
		return v.Running
	}
	spot := cheapestSpot(offers)
	if onOD {
		if spot < 0 || v.Done < expectedProgress(v, v.Elapsed+2*v.Overhead) {
			return v.Running
		}
		return spot
	}
	if spot >= 0 {
		return spot
	}
	if od >= 0 && v.Done < expectedProgress(v, v.Elapsed) {
		return od
	}
	return -1
}

// expectedProgress is the work a job spread evenly over its deadline has done at t.
func expectedProgress(v JobView, t time.Duration) time.Duration {
	if v.Deadline <= 0 {
		return v.Work
	}
	return time.Duration(float64(v.Work) * float64(t) / float64(v.Deadline))
}

// isSpot says whether an offer can be reclaimed; reserved capacity counts as on-demand.
func isSpot(o JobOffer) bool { return o.Market == MarketSpot }

// cheapestOnDemand is the index of the cheapest available non-spot offer, -1 when none.
func cheapestOnDemand(offers []JobOffer) int {
	return cheapestWhere(offers, func(o JobOffer) bool { return !isSpot(o) })
}

// cheapestSpot is the index of the cheapest available spot offer (ties: the lower hazard), -1
// when none.
func cheapestSpot(offers []JobOffer) int {
	return cheapestWhere(offers, isSpot)
}

// cheapestWhere is the index of the cheapest available offer that keep accepts, ties broken by
// the lower hazard and then the lower index, -1 when none.
func cheapestWhere(offers []JobOffer, keep func(JobOffer) bool) int {
	best := -1
	for i, o := range offers {
		if !o.Available || !keep(o) {
			continue
		}
		if best < 0 || o.PricePerHour < offers[best].PricePerHour ||
			(o.PricePerHour == offers[best].PricePerHour && o.Hazard < offers[best].Hazard) {
			best = i
		}
	}
	return best
}
