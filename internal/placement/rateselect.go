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
// the need, and the fallback and the hedge count in rate (ratehedge.go). A workload with running
// replicas keeps them unless a set chosen afresh pays back its moves (chooseRate). The replica
// count of the desired set is an outcome: wplan.need holds it once the set is chosen.

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
		return cmp.Or(cmp.Compare(per[b], per[a]), s.youngerFirst(s.slots[a], s.slots[b]))
	})
	return order
}

// youngerFirst orders two ready replicas alike in cost: the newer first, so that the replica trim
// keeps is the one that has served longest and a drain never reads as the newer replacing the
// older. Launching replicas keep their order: one may be what a rise about to come needs.
func (s *selection) youngerFirst(a, b slot) int {
	if a.replica < 0 || b.replica < 0 {
		return 0
	}
	ra, rb := s.wp.s.Replicas[a.replica], s.wp.s.Replicas[b.replica]
	if ra.State != StateReady || rb.State != StateReady {
		return 0
	}
	return cmp.Or(rb.Since.Compare(ra.Since), cmp.Compare(rb.ID, ra.ID))
}

// selectByRate chooses the desired set of a workload planned by rate and records the outcome
// in out: the replica count (need), the rate needed and placed, and any shortfall.
func (wp *workloadPlanner) selectByRate(out *wplan, sel *selection, incs []incumbent) {
	w := out.w
	lo, hi := rateCounts(w)
	sel.rate = rateNeed{on: true, need: demandRate(w), min: lo, max: hi}
	out.rated, out.needRate, out.minCount = true, sel.rate.need, lo
	out.remixed = sel.chooseRate(incs)
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

// chooseRate builds the set that keeps the running replicas (keepRate) and, beside it, the set
// chosen afresh (remixRate), and takes the fresh one only when it pays: its comparable cost counts
// each running replica less the one-off cost of leaving it spread over the payback horizon
// (incumbentCost), so it is lower only when the hourly saving pays back the moves in time. A
// demand that moves then adds to and trims the set instead of re-mixing it. It reports whether
// the set is a re-mix.
func (s *selection) chooseRate(incs []incumbent) (remixed bool) {
	s.incs = incs
	if len(incs) == 0 {
		s.remixRate(incs)
		return false
	}
	s.keepRate(incs)
	if s.inCooldown() || s.wp.halted() {
		return false
	}
	keep, keepCost, keepRate := slices.Clone(s.slots), s.setCost(), s.rateSum()
	s.clear()
	s.remixRate(incs)
	serves := s.rateSum() >= min(keepRate, s.rate.need)-rateSlack(s.rate.need) && len(s.slots) >= min(len(keep), s.rate.min)
	if !serves || s.setCost() >= keepCost-1e-9 {
		s.clear()
		for _, sl := range keep {
			s.restore(len(s.slots), sl)
		}
		return false
	}
	return s.dropsIncumbent(keep)
}

// remixRate is the set chosen afresh: the greedy fill cheapest per useful unit over running
// replicas and new launches alike, repaired for the rules and trimmed.
func (s *selection) remixRate(incs []incumbent) {
	s.fillRate(incs)
	s.settle()
}

// keepRate is the set that keeps every running replica (the ready first, up to the maximum),
// adds the launches cheapest per useful unit while the rate is not covered, then trims what the
// cover no longer needs, dearest per unit first.
func (s *selection) keepRate(incs []incumbent) {
	for i := range incs {
		if len(s.slots) >= s.rate.max {
			break
		}
		s.add(option{inc: i, cand: -1, cost: incs[i].cost}, "")
	}
	s.fillRate(incs)
	s.settle()
}

// settle repairs the set for the spread and location rules, keeping the rate it serves, and
// trims it.
func (s *selection) settle() {
	s.rate.floor = min(s.rate.need, s.rateSum())
	s.repair(s.w.MinLocations)
	s.trim(s.w.MinLocations)
}

// setCost is the set's comparable cost per hour (slotCost summed).
func (s *selection) setCost() float64 {
	sum := 0.0
	for _, sl := range s.slots {
		sum += s.slotCost(sl)
	}
	return sum
}

// clear empties the set, giving back the capacity its launches took.
func (s *selection) clear() {
	for len(s.slots) > 0 {
		s.remove(len(s.slots) - 1)
	}
}

// inCooldown says whether the workload moved for price within Policy.Cooldown: no re-mix then.
func (s *selection) inCooldown() bool {
	last := s.w.LastMoveAt
	return !last.IsZero() && s.wp.now.Sub(last) < s.wp.p.Cooldown
}

// dropsIncumbent says whether the set leaves out a running replica that keep held: only then is
// a re-mix a move.
func (s *selection) dropsIncumbent(keep []slot) bool {
	for _, sl := range keep {
		if sl.replica >= 0 && !s.usedInc[sl.replica] {
			return true
		}
	}
	return false
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
