package placement

import (
	"math"
	"time"
)

// offerRisk is what the planner learns from an offer's history.
type offerRisk struct {
	// hazard is preemptions per instance-hour: decayed preemptions over decayed exposure, with a
	// prior worth Policy.PriorExposure of survival.
	hazard float64
	// launchChance is the chance a launch finds capacity now, in [0,1].
	launchChance float64
	// held is true when the offer recently gave us capacity (a launch or a running replica).
	held bool
}

// decay is the weight of something seen age ago under a half-life.
func decay(age, halfLife time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// decayedSpan is the decayed exposure (in hours) of an interval that ended endAge ago and lasted
// lived: the integral of the decay weight over it, so long-ago survival counts less.
func decayedSpan(endAge, lived, halfLife time.Duration) float64 {
	if lived <= 0 {
		return 0
	}
	if endAge < 0 {
		endAge = 0
	}
	tau := halfLife.Hours() / math.Ln2
	return tau * (decay(endAge, halfLife) - decay(endAge+lived, halfLife))
}

// estimateRisk turns an offer's observations and the replicas running on it into a hazard and a
// launch chance. Only spot offers are reclaimable; other markets get zero hazard.
//
// The launch chance is a Beta estimate over decayed evidence: launches that got capacity and the
// replicas launched there (successes), against launches that failed and preemptions (failures),
// with one pseudo-observation of each, so an offer never tried starts at one half and a recent
// failure outweighs an old success.
func estimateRisk(o *Offer, running []time.Time, p *Policy, now time.Time) offerRisk {
	events, exposure := 0.0, 0.0
	succ, fail := 0.0, 0.0
	for _, ob := range o.History {
		age := now.Sub(ob.At)
		if age < 0 {
			continue // a fact from the future is ignored: the planner only knows the past
		}
		n := float64(max(ob.Count, 1))
		w := n * decay(age, p.CapacityHalfLife)
		switch ob.Kind {
		case ObsPreempted:
			events += n * decay(age, p.HazardHalfLife)
			exposure += n * decayedSpan(age, ob.Lived, p.HazardHalfLife)
			fail += w
		case ObsEnded:
			exposure += n * decayedSpan(age, ob.Lived, p.HazardHalfLife)
		case ObsLaunchFailed:
			fail += w
		case ObsLaunched:
			succ += w
		}
	}
	for _, since := range running {
		exposure += decayedSpan(0, now.Sub(since), p.HazardHalfLife)
		succ += decay(now.Sub(since), p.CapacityHalfLife)
	}
	r := offerRisk{held: len(running) > 0, launchChance: (1 + succ) / (2 + succ + fail)}
	if o.Market != MarketSpot || o.Capacity > 0 {
		// Non-spot capacity, and spot the provider says has room, is taken as there unless
		// launches failed.
		r.launchChance = 1 - fail/(1+fail)
	}
	if o.Market == MarketSpot {
		prior := p.PriorExposure.Hours()
		r.hazard = (p.PriorHazardPerHour*prior + events) / (prior + exposure)
	}
	if o.Availability > 0 {
		r.launchChance *= o.Availability
	}
	if r.held {
		r.launchChance = min(1, r.launchChance+p.HoldBonus)
	}
	return r
}
