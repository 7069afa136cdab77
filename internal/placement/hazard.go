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

// evidence is what an offer's history and running replicas say, decayed: preemptions against
// survival time for the hazard, launches that got capacity against those that did not.
type evidence struct {
	events, exposure float64 // preemptions and instance-hours, decayed by HazardHalfLife
	succ, fail       float64 // decayed by CapacityHalfLife
	held             bool
}

// gather decays an offer's observations and the replicas running on it into evidence.
func gather(o *Offer, running []time.Time, p *Policy, now time.Time) evidence {
	var e evidence
	for _, ob := range o.History {
		age := now.Sub(ob.At)
		if age < 0 {
			continue // a fact from the future is ignored: the planner only knows the past
		}
		n := float64(max(ob.Count, 1))
		w := n * decay(age, p.CapacityHalfLife)
		switch ob.Kind {
		case ObsPreempted:
			e.events += n * decay(age, p.HazardHalfLife)
			e.exposure += n * decayedSpan(age, ob.Lived, p.HazardHalfLife)
			e.fail += w
		case ObsEnded:
			e.exposure += n * decayedSpan(age, ob.Lived, p.HazardHalfLife)
		case ObsLaunchFailed:
			e.fail += w
		case ObsLaunched:
			e.succ += w
		}
	}
	for _, since := range running {
		e.exposure += decayedSpan(0, now.Sub(since), p.HazardHalfLife)
		e.succ += decay(now.Sub(since), p.CapacityHalfLife)
	}
	e.held = len(running) > 0
	return e
}

// marketHazard is the preemption hazard of the spot market as a whole: every spot offer's decayed
// preemptions over its decayed exposure, pooled, with the policy's prior. It is the prior each
// offer's own estimate starts from (empirical Bayes): an offer seen little is taken to be like
// the market it is part of, not like a fixed constant, so a market where instances are reclaimed
// often makes even a quiet zone look risky until that zone has shown otherwise for a while.
func marketHazard(ev []evidence, offers []Offer, p *Policy) float64 {
	prior := p.PriorExposure.Hours()
	events, exposure := p.PriorHazardPerHour*prior, prior
	for i := range ev {
		if offers[i].Market == MarketSpot {
			events += ev[i].events
			exposure += ev[i].exposure
		}
	}
	return events / exposure
}

// estimateRisk turns an offer's evidence into a hazard and a launch chance, starting the hazard
// from the market's (see marketHazard). Only spot offers are reclaimable; other markets get zero
// hazard.
//
// The launch chance is a Beta estimate over decayed evidence: launches that got capacity and the
// replicas launched there (successes), against launches that failed and preemptions (failures),
// with one pseudo-observation of each, so an offer never tried starts at one half and a recent
// failure outweighs an old success.
func estimateRisk(o *Offer, e evidence, market float64, p *Policy) offerRisk {
	r := offerRisk{held: e.held, launchChance: (1 + e.succ) / (2 + e.succ + e.fail)}
	if o.Market != MarketSpot || o.Capacity > 0 {
		// Non-spot capacity, and spot the provider says has room, is taken as there unless
		// launches failed.
		r.launchChance = 1 - e.fail/(1+e.fail)
	}
	if o.Market == MarketSpot {
		prior := p.PriorExposure.Hours()
		r.hazard = (market*prior + e.events) / (prior + e.exposure)
	}
	if o.Availability > 0 {
		r.launchChance *= o.Availability
	}
	if r.held {
		r.launchChance = min(1, r.launchChance+p.HoldBonus)
	}
	return r
}
