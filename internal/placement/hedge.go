package placement

import "math"

// repair applies the spread and location rules. When the greedy set breaks one, it looks for the
// cheapest set that keeps both by exact search over the workload's small choice set; when that
// search finds none or runs out of budget, it swaps replicas until the rules hold, then looks for
// single swaps that make the set cheaper while keeping them.
func (s *selection) repair(minLoc int) {
	if s.optimize(minLoc) {
		return
	}
	fixed := false
	for range 4 {
		a := s.fixSpread(minLoc)
		b := s.fixLocations(minLoc)
		if !a && !b {
			break
		}
		fixed = true
	}
	if fixed {
		s.improve(minLoc)
	}
}

// rulesHold reports whether the set keeps the spread rule (as far as it held before: spreadOK)
// and spans at least minLoc locations (as far as it did before: locs).
func (s *selection) rulesHold(spreadOK bool, locs, minLoc int) bool {
	d, n := s.spotDomains()
	if spreadOK && n >= 2 && d < 2 {
		return false
	}
	return s.locations() >= min(locs, minLoc) && s.holdsRate()
}

func (s *selection) locations() int {
	seen := map[string]bool{}
	for _, sl := range s.slots {
		seen[s.wp.ix.offers[sl.offer].o.Location] = true
	}
	return len(seen)
}

// improve makes single swaps that lower the set's cost without breaking a rule it keeps.
func (s *selection) improve(minLoc int) {
	for range 2 * len(s.slots) {
		if s.wp.halted() {
			return
		}
		d, n := s.spotDomains()
		spreadOK, locs := n < 2 || d >= 2, s.locations()
		if !s.improveOnce(spreadOK, locs, minLoc) {
			return
		}
	}
}

func (s *selection) improveOnce(spreadOK bool, locs, minLoc int) bool {
	opts := s.distinct(s.options(nil))
	seen := map[swapKey]bool{}
	for i := range s.slots {
		if s.wp.halted() {
			return false
		}
		sl := s.slots[i]
		if k := (swapKey{sl.offer, sl.replica < 0}); seen[k] {
			continue // tried as an earlier slot of the same key: the same swaps, the same outcome
		} else {
			seen[k] = true
		}
		c := s.slotCost(sl)
		for _, a := range opts {
			if a.cost >= c-1e-9 {
				continue
			}
			s.remove(i)
			s.add(a, "")
			if s.rulesHold(spreadOK, locs, minLoc) {
				return true
			}
			s.remove(len(s.slots) - 1)
			s.restore(i, sl)
		}
	}
	return false
}

// restore puts a removed slot back at position i.
func (s *selection) restore(i int, sl slot) {
	if sl.replica >= 0 {
		s.usedInc[sl.replica] = true
	} else {
		s.wp.ix.take(sl.offer, 1)
		for c, oi := range s.wp.cand {
			if int(oi) == sl.offer {
				s.newCount[c]++
				break
			}
		}
	}
	s.slots = append(s.slots, slot{})
	copy(s.slots[i+1:], s.slots[i:])
	s.slots[i] = sl
	s.counted(sl.offer, 1)
}

// hedge adds extra spot replicas while the chance of losing more replicas than the hedge covers
// within the loss window is above the risk the workload accepts (hedgeRisk: Policy.HedgeRisk
// unless it states an availability target). Losses are modelled per failure domain: a
// domain is reclaimed with the chance its hazard gives over the window and takes all the set's
// replicas in it, since capacity drops hit a zone's instances together.
func (s *selection) hedge(need int) {
	p := s.wp.p
	if p.MaxHedge <= 0 || len(s.slots) < need || need == 0 {
		return
	}
	for h := 0; h < p.MaxHedge && s.lossTail(h) > s.hedgeRisk(); h++ {
		if s.w.MaxReplicas > 0 && len(s.slots) >= s.w.MaxReplicas {
			return
		}
		o, ok := s.cheapestBy(s.hedgeable, s.hedgeCost)
		if !ok {
			return
		}
		s.add(o, ReasonHedge)
	}
}

// hedgeable says whether offer oi may hold a hedge: spot, or, unless fallback is off, capacity
// that is not reclaimed; the cheapest by effective price wins, so on-demand hedges only when spot
// launches are unlikely to find capacity.
func (s *selection) hedgeable(oi int) bool {
	return s.isSpot(oi) || !s.wp.p.DisableFallback
}

// lossTail is the chance of losing more than h of the set's replicas within the loss window.
func (s *selection) lossTail(h int) float64 {
	type dom struct {
		p float64
		k int
	}
	var doms []dom
	at := map[string]int{}
	for _, sl := range s.slots {
		o := &s.wp.ix.offers[sl.offer]
		if o.o.Market != MarketSpot {
			continue
		}
		pl := 1 - math.Exp(-o.risk.hazard*s.window.Hours())
		i, ok := at[o.domain]
		if !ok {
			i = len(doms)
			at[o.domain] = i
			doms = append(doms, dom{})
		}
		doms[i].k++
		doms[i].p = max(doms[i].p, pl)
	}
	dist := []float64{1} // dist[j]: chance of losing exactly j so far
	for _, d := range doms {
		next := make([]float64, len(dist)+d.k)
		for j, q := range dist {
			next[j] += q * (1 - d.p)
			next[j+d.k] += q * d.p
		}
		dist = next
	}
	tail := 0.0
	for j := h + 1; j < len(dist); j++ {
		tail += dist[j]
	}
	return tail
}

// fallback backs the set's new spot launches when they are unlikely enough to cover the
// replicas still missing: it adds launches, cheapest effective price first, on spot offers not yet
// tried by this set (independent chances) or on non-spot capacity (taken as sure), until coverage
// is at least as likely as fallbackConfidence asks (Policy.FallbackConfidence unless the workload
// states an availability target). Launches that turn out not to be needed are drained once the
// need is met.
func (s *selection) fallback(need int) {
	p := s.wp.p
	if p.DisableFallback {
		return
	}
	cover := 0
	var chances launchTally
	tried := map[int]bool{}
	for _, sl := range s.slots {
		switch {
		case sl.replica >= 0:
			cover++
		case s.isSpot(sl.offer):
			chances.add(s.wp.ix.offers[sl.offer].risk.launchChance)
			tried[sl.offer] = true
		default:
			cover++ // a non-spot launch is taken as sure
		}
	}
	for chances.atLeast(need-cover) < s.fallbackConfidence() && !s.wp.halted() {
		o, ok := s.cheapestOption(func(oi int) bool { return !s.isSpot(oi) || !tried[oi] })
		if !ok {
			return
		}
		s.add(o, ReasonFallback)
		oi := s.offerOf(o)
		if o.inc >= 0 || !s.isSpot(oi) {
			cover++
			continue
		}
		tried[oi] = true
		chances.add(s.wp.ix.offers[oi].risk.launchChance)
	}
}

// launchTally is the distribution of how many of a set of independent launches find capacity:
// tally[j] is the chance exactly j do. It grows one launch at a time, so the fallback loop asks
// it again after each launch it adds without recomputing it from scratch.
type launchTally []float64

// add counts one more launch, finding capacity with chance c.
func (t *launchTally) add(c float64) {
	if len(*t) == 0 {
		*t = append(*t, 1)
	}
	d := append(*t, 0)
	for j := len(d) - 1; j >= 1; j-- {
		d[j] = d[j]*(1-c) + d[j-1]*c
	}
	d[0] *= 1 - c
	*t = d
}

// atLeast is the chance that at least k of the launches find capacity.
func (t launchTally) atLeast(k int) float64 {
	if k <= 0 {
		return 1
	}
	sum := 0.0
	for j := k; j < len(t); j++ {
		sum += t[j]
	}
	return math.Min(1, sum)
}
