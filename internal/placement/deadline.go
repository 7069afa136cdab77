package placement

import (
	"math"
	"slices"
	"time"
)

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
	// Outage is how long no spot offer of the job has been available (0 while one is), and
	// Outages the lengths of such spells seen before, over the History span: the planner judges
	// from them how long waiting for spot is worth. With no spells seen it assumes spells
	// exponentially distributed, from the offers' Uptime and Hazard.
	Outage  time.Duration
	Outages []time.Duration
	History time.Duration
	// SpotFor is how long some spot offer of the job has been available without a break (0
	// while none is), and SpotRuns the lengths of such runs seen before, over History: a job on
	// on-demand spends its slack on the changeovers of the runs that last.
	SpotFor  time.Duration
	SpotRuns []time.Duration
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
//
// Otherwise it spends the job's slack (the time to spare if on-demand ran from now on) where
// it buys the most: spot whenever some is there and can pay for its changeover; through a spell
// with no spot it waits as long as the slack it can expect to need for the spells still to come
// allows (waitLimit), then runs on-demand; it leaves on-demand for spot when the spot run it
// can expect saves more than the two changeovers the move may cost, and, when the slack left
// cannot pay such a move on every run to come, only on runs that have lasted long enough to be
// among the ones it can pay for (stintAge). Everything it knows of the future is what the
// caller measured of the past: the offers' Uptime and Hazard and the spells and runs seen.
func PlanJob(v JobView, offers []JobOffer) int {
	if v.Done >= v.Work {
		return -1
	}
	od := cheapestOnDemand(offers)
	onOD := v.Running >= 0 && !isSpot(offers[v.Running])
	if od >= 0 && mustRunOnDemand(v) {
		if onOD {
			return v.Running
		}
		return od
	}
	if v.Running >= 0 && isSpot(offers[v.Running]) && offers[v.Running].Available {
		return v.Running
	}
	if spot := cheapestSpot(offers); spot >= 0 {
		switch {
		case onOD && (!worthLeaving(offers[v.Running], offers[spot], v.Overhead) || v.SpotFor < stintAge(v)):
			return v.Running
		case od >= 0 && !affordsLaunch(v):
			if onOD {
				return v.Running
			}
			return od
		}
		return spot
	}
	switch {
	case onOD:
		return v.Running
	case od < 0 || v.Outage < waitLimit(v, offers):
		return -1
	}
	return od
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

// cheapestSpotPrice is the lowest price among the spot offers, available now or not (0 when
// there are none).
func cheapestSpotPrice(offers []JobOffer) float64 {
	p := math.Inf(1)
	for _, o := range offers {
		if isSpot(o) {
			p = min(p, o.PricePerHour)
		}
	}
	if math.IsInf(p, 1) {
		return 0
	}
	return p
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

// worthLeaving says whether moving from on-demand to a spot offer pays: the spot run it expects
// (1/hazard) must save more than the two changeovers it costs (one now, one when reclaimed),
// each billed at on-demand's price in the worst case.
func worthLeaving(from, to JobOffer, d time.Duration) bool {
	save := from.PricePerHour - to.PricePerHour
	if save <= 0 {
		return false
	}
	if to.Hazard <= 0 {
		return true
	}
	run := 1 / to.Hazard // hours
	return save*run > 2*d.Hours()*from.PricePerHour
}

// slack is the time the job has to spare if on-demand ran it from now on: time left, less the
// work left and one launch's overhead.
func slack(v JobView) time.Duration {
	return v.Deadline - v.Elapsed - (v.Work - v.Done) - v.Overhead
}

// affordsLaunch says whether a spot launch can pay for itself in slack: after its overhead
// the job must still have two ticks to spare, one for the guarantee and one to run.
func affordsLaunch(v JobView) bool {
	return slack(v)-v.Overhead >= 2*v.Tick
}

// waitLimit is how long the job may wait out one spell with no spot before it runs on-demand.
// Waiting spends slack one for one; giving up on a spell spends one more launch's overhead.
// The limit is the longest that, applied to every spell to come, leaves the slack for them and
// for the spot launch that ends each: short spells are waited out, long ones run on-demand. It
// keeps back what one more spot launch needs (affordsLaunch), so that spending the slack on
// waits never leaves the job's last stretch on on-demand for want of it. The spells to come
// are judged from those seen (Outages over History) where there are some, else assumed
// exponentially distributed from the best spot offer's uptime and hazard.
func waitLimit(v JobView, offers []JobOffer) time.Duration {
	budget := slack(v) - v.Overhead - 2*v.Tick
	count, mean, ok := expectedSpells(v, offers)
	if !ok {
		return max(budget, 0)
	}
	budget -= time.Duration(count * float64(v.Overhead))
	if budget <= 0 || count <= 0 {
		return max(budget, 0)
	}
	per := time.Duration(float64(budget) / count) // slack each spell may use
	if len(v.Outages) > 0 {
		return empiricalLimit(per, slices.Sorted(slices.Values(v.Outages)), v.Overhead)
	}
	return exponentialLimit(per, mean, v.Overhead)
}

// expectedSpells is the number of spells with no spot to come before the deadline and, where
// none has been seen, their mean length from the best spot offer's uptime and hazard.
func expectedSpells(v JobView, offers []JobOffer) (count float64, mean time.Duration, ok bool) {
	left := (v.Deadline - v.Elapsed).Hours()
	if len(v.Outages) > 0 && v.History > 0 {
		return left * float64(len(v.Outages)) / v.History.Hours(), 0, true
	}
	best := -1
	for i, o := range offers {
		if isSpot(o) && o.Hazard > 0 && o.Uptime > 0 && o.Uptime < 1 && (best < 0 || o.Uptime > offers[best].Uptime) {
			best = i
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	u, h := offers[best].Uptime, offers[best].Hazard
	return left * u * h, time.Duration((1 - u) / (u * h) * float64(time.Hour)), true
}

// forever is a wait limit no spell reaches.
const forever = time.Duration(1<<63 - 1)

// empiricalLimit is the largest limit tau with mean(min(L, tau) + d·[L > tau]) ≤ per over the
// observed lengths L (sorted).
func empiricalLimit(per time.Duration, lengths []time.Duration, d time.Duration) time.Duration {
	n := time.Duration(len(lengths))
	total := time.Duration(0)
	for _, l := range lengths {
		total += l
	}
	if total <= per*n {
		return forever
	}
	best := time.Duration(0)
	below := time.Duration(0) // sum of the lengths under tau
	for i, l := range lengths {
		// tau in [lengths[i-1], l): the first i spells end before tau
		lo := time.Duration(0)
		if i > 0 {
			lo = lengths[i-1]
		}
		if tau := (per*n-below)/(n-time.Duration(i)) - d; tau >= lo {
			best = max(best, min(tau, l))
		}
		below += l
	}
	return best
}

// exponentialLimit is the largest limit tau for spells of exponentially distributed length
// with the given mean whose expected use of slack, m·(1−e^(−tau/m)) + d·e^(−tau/m), is at most per.
func exponentialLimit(per, mean, d time.Duration) time.Duration {
	switch {
	case per >= mean:
		return forever
	case per < d || mean <= d:
		return 0
	}
	m := float64(mean)
	return time.Duration(-m * math.Log((m-float64(per))/(m-float64(d))))
}

// stintAge is how long a spot run must have lasted before a job on on-demand moves to it. Each
// such move may cost two changeovers of slack (one now, one back when spot is reclaimed); when
// the slack left cannot pay for a move on every run to come, it is kept for the runs that last,
// judged by how long a run has lasted already: the age that only as many runs reach as the
// slack can pay for.
func stintAge(v JobView) time.Duration {
	if len(v.SpotRuns) == 0 || v.History <= 0 || v.Overhead <= 0 {
		return 0
	}
	runs := (v.Deadline - v.Elapsed).Hours() * float64(len(v.SpotRuns)) / v.History.Hours()
	affordable := float64(slack(v)-v.Tick) / float64(2*v.Overhead)
	if runs <= affordable {
		return 0
	}
	if affordable <= 0 {
		return forever
	}
	lengths := slices.Sorted(slices.Values(v.SpotRuns))
	keep := int(float64(len(lengths)) * affordable / runs) // runs the slack can pay a move for
	if keep >= len(lengths) {
		return 0
	}
	return lengths[len(lengths)-1-keep]
}
