package placement

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// A workload planned by rate (Workload.Throughput) goes through the same selection as one planned
// in replicas, with the count replaced by a rate: the greedy fill ranks options by cost per unit
// served, the repair's swaps keep the rate the set serves, a trim drops what the fill left beyond
// the need, and the fallback and the hedge count in rate (ratehedge.go). The replica count of the
// desired set is an outcome: wplan.need holds it once the set is chosen.

// rateNeed is what a workload planned by rate asks of its set.
type rateNeed struct {
	on       bool
	need     float64 // DemandRate, made usable (demandRate)
	min, max int     // replica bounds (rateCounts)
	// floor is the rate the repair's swaps must keep: the need, or what the set served when the
	// repair began if that was less (a set short of capacity still gets its rules fixed).
	floor float64
}

// rateOf is what a replica on offer oi serves for the workload: 1 for a workload planned in
// replicas, so that there summing rates is counting replicas.
func (s *selection) rateOf(oi int) float64 {
	if !s.rate.on {
		return 1
	}
	return s.wp.rates[s.wp.ix.offers[oi].model]
}

// rateSum is what the whole set serves.
func (s *selection) rateSum() float64 {
	sum := 0.0
	for _, sl := range s.slots {
		sum += s.rateOf(sl.offer)
	}
	return sum
}

// covered says whether the set serves the needed rate with at least the minimum count.
func (s *selection) covered() bool {
	return len(s.slots) >= s.rate.min && s.rateSum() >= s.rate.need-rateSlack(s.rate.need)
}

// holdsRate says whether the set still serves the repair's floor: swaps trade cost and spread,
// never coverage. A swap always keeps the count, so a workload planned in replicas always holds.
func (s *selection) holdsRate() bool {
	return !s.rate.on || s.rateSum() >= s.rate.floor-rateSlack(s.rate.floor)
}

// useful is the part of a replica's rate that goes to what the set still lacks (left): all of
// it while much is missing, only the rest at the end, so the last replica is the one that covers
// the rest cheapest rather than the one cheapest per unit of a rate no one needs. Once the rate is
// covered (only the minimum count is missing) it is 1: cost alone decides.
func useful(rate, left float64) float64 {
	if left <= 0 {
		return 1
	}
	return min(rate, left)
}

// fillRate adds, one at a time, the option cheapest per useful unit until the set covers the
// rate and the minimum count, reaches the maximum, or nothing is left. An option's cost is the
// comparable cost of today (incumbents less what leaving them would cost, new launches at their
// risk-adjusted price), so a running replica stays while a move does not pay per unit either.
func (s *selection) fillRate(incs []incumbent) {
	s.incs = incs
	for !s.covered() && len(s.slots) < s.rate.max && !s.wp.halted() {
		left := s.rate.need - s.rateSum()
		o, ok := s.cheapestPer(nil, s.newCost, func(oi int) float64 { return useful(s.rateOf(oi), left) })
		if !ok {
			return
		}
		s.add(o, "")
	}
}

// trim drops slots the covered set does not need: with several models the greedy fill and the
// repair's swaps can leave a replica whose removal still covers the rate and the minimum count.
// New launches go before running replicas (keeping one saves a cold start), the dearest per unit
// first; a removal that would break a rule the set keeps (locations, spread) is not made.
func (s *selection) trim(minLoc int) {
	if !s.covered() {
		return
	}
	d, n := s.spotDomains()
	spreadOK, locs := n < 2 || d >= 2, s.locations()
	for changed := true; changed && !s.wp.halted(); {
		changed = false
		for _, i := range s.trimOrder() {
			sl := s.slots[i]
			s.remove(i)
			if s.covered() && s.rulesHold(spreadOK, locs, minLoc) {
				changed = true
				break
			}
			s.restore(i, sl)
		}
	}
}

// trimOrder lists the set's positions in the order trim tries them.
func (s *selection) trimOrder() []int {
	order := make([]int, len(s.slots))
	per := make([]float64, len(s.slots))
	for i, sl := range s.slots {
		order[i], per[i] = i, perUnit(s.slotCost(sl), s.rateOf(sl.offer))
	}
	slices.SortStableFunc(order, func(a, b int) int {
		fa, fb := s.slots[a].replica < 0, s.slots[b].replica < 0
		if fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		return cmp.Compare(per[b], per[a])
	})
	return order
}

// selectByRate chooses the desired set of a workload planned by rate and records the outcome
// in out: the replica count (need), the rate needed and placed, and any shortfall.
func (wp *workloadPlanner) selectByRate(out *wplan, sel *selection, incs []incumbent) {
	w := out.w
	lo, hi := rateCounts(w)
	sel.rate = rateNeed{on: true, need: demandRate(w), min: lo, max: hi}
	out.rated, out.needRate, out.minCount = true, sel.rate.need, lo
	sel.fillRate(incs)
	sel.rate.floor = min(sel.rate.need, sel.rateSum())
	sel.repair(w.MinLocations)
	sel.trim(w.MinLocations)
	out.placedRate = sel.rateSum()
	out.shortfall, out.why = wp.rateShortfall(out, sel, incs)
	out.need = len(sel.slots) + out.shortfall
	// As for replicas: the fallback backs the set's spot launches, then the hedge holds a spare.
	// Both aim at what the set was chosen to serve, which is less than the need when capacity or
	// the maximum ran out.
	sel.rate.need, sel.rate.min = min(sel.rate.need, out.placedRate), min(lo, len(sel.slots))
	sel.fallbackRate()
	sel.hedgeRate()
}

// rateShortfall is how many more replicas the set would need (an estimate at the fastest model
// the workload accepts) and why it has not got them; 0 and "" when it covers the need.
func (wp *workloadPlanner) rateShortfall(out *wplan, sel *selection, incs []incumbent) (int, string) {
	w, unit := out.w, out.w.RateUnit
	missing := out.needRate - out.placedRate
	short := max(out.minCount-len(sel.slots), 0)
	if missing > rateSlack(out.needRate) {
		fast := 0.0
		for m := range w.Throughput {
			fast = max(fast, modelRate(w, m))
		}
		if fast > 0 {
			short = max(short, int(math.Ceil(missing/fast)))
		}
	}
	needs := "needs " + formatRate(out.needRate, unit)
	switch {
	case short > 0 && len(incs) == 0 && len(wp.cand) == 0:
		if why := wp.ix.nowhere(w); why != WhyNoOffers {
			return short, needs + "; " + why
		}
		return short, WhyNoOffers
	case short > 0 && len(sel.slots) >= sel.rate.max:
		return short, fmt.Sprintf("%s; its most, %d replicas, serve %s", needs, len(sel.slots), formatRate(out.placedRate, unit))
	case short > 0:
		return short, fmt.Sprintf("%s; %d replicas placed serve %s: not enough eligible capacity", needs, len(sel.slots), formatRate(out.placedRate, unit))
	case w.MinLocations > 0 && sel.locations() < w.MinLocations:
		return 0, needs + "; not enough eligible locations"
	case demandRate(w) != w.DemandRate:
		return 0, w.CheckRates().Error()
	}
	return 0, ""
}

// assignRateReasons labels the new launches of a rate-planned set, as assignReasons does, with
// what is missing counted in rate: the running replicas that qualify serve incRate; of the rest
// of the need, what reclaimed replicas served is replaced first (reclaim), then what replicas
// that no longer qualify served (residency), then growth (demand_up, also for replicas the
// minimum count lacks); a launch beyond that is a move (cheaper_offer).
func (wp *workloadPlanner) assignRateReasons(out *wplan, incs []incumbent, invalid []int) {
	rate := func(ri int) float64 {
		if oi, ok := wp.ix.byID[wp.s.Replicas[ri].Offer]; ok {
			return modelRate(out.w, wp.ix.offers[oi].o.GPUModel)
		}
		return 0
	}
	incRate, invalidRate := 0.0, 0.0
	for _, in := range incs {
		incRate += modelRate(out.w, wp.ix.offers[in.offer].o.GPUModel)
	}
	for _, ri := range invalid {
		invalidRate += rate(ri)
	}
	slack := rateSlack(out.needRate)
	missing := max(out.needRate-incRate, 0)
	reclaim := min(out.lostRate, missing)
	resid := min(invalidRate, missing-reclaim)
	grow, growN := missing-reclaim-resid, max(out.minCount-len(incs), 0)
	spotAllowed := len(out.w.Markets) == 0 || containsMarket(out.w.Markets, MarketSpot)
	for i := range out.desired {
		sl := &out.desired[i]
		if sl.replica >= 0 || sl.reason != "" {
			continue
		}
		r := modelRate(out.w, wp.ix.offers[sl.offer].o.GPUModel)
		switch {
		case reclaim > slack:
			sl.reason, reclaim = ReasonReclaim, reclaim-r
		case resid > slack:
			sl.reason, resid = ReasonResidency, resid-r
		case grow > slack || growN > 0:
			sl.reason, grow, growN = ReasonDemandUp, grow-r, growN-1
		default:
			sl.reason = ReasonCheaperOffer
		}
		if sl.reason != ReasonCheaperOffer && spotAllowed && !wp.isSpot(sl.offer) {
			sl.reason = ReasonFallback
		}
	}
}
