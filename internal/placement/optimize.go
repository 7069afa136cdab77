package placement

import (
	"cmp"
	"math"
	"slices"
)

// exactNodeBudget bounds the branch-and-bound of one workload. A workload's choice set is small
// (its incumbents and a few candidate offers), so the search nearly always ends well inside it;
// when it does not, the planner falls back to the swap heuristics, so the plan stays bounded in
// time whatever the estate looks like.
const exactNodeBudget = 20_000

// exactItem is one entry of the exact step's choice set: a running replica (at most one) or new
// launches on a candidate offer (up to its room).
type exactItem struct {
	opt   option
	cost  float64 // comparable cost of one replica (slotCost / newCost)
	pen   float64 // spot spread weight: price × hazard weight × hazard × loss window; 0 off spot
	cap   int
	rate  float64 // what one replica serves, for a workload planned by rate; 0 otherwise
	loc   int     // location id within the search
	dom   int     // spot failure domain id within the search; -1 off spot
	fresh bool
}

// exactSearch finds the cheapest set of n replicas from a workload's choice set that keeps the
// location and spread rules, by depth-first branch and bound over how many replicas each item
// takes. Items are sorted by cost, so cost so far plus the remaining replicas at the next item's
// cost is a lower bound, and trying the most of the cheapest item first finds good sets early.
type exactSearch struct {
	items      []exactItem
	locTarget  int
	needSpread bool
	// needRate is the rate the set must keep serving (a workload planned by rate: the repair's
	// floor); maxRate is the largest item rate, to prune sets that can no longer reach it.
	needRate, maxRate float64
	rate              float64
	locFree           []int // per location id: room left for new launches; -1 means no limit

	locNames, domNames []string

	counts     []int
	best       float64
	bestCounts []int
	found      bool
	nodes      int
	aborted    bool

	locUse, domUse          []int
	domPen                  []float64
	locs, spot, fresh, doms int
}

// mayBreakRules is a cheap test of whether the greedy set can break a rule the repair step fixes:
// two or more spot replicas, one of them new, all in one failure domain; or fewer locations than
// the minimum while the set is large enough to span it. Whether another domain or location is on
// offer is left to rulesBroken.
func (s *selection) mayBreakRules(minLoc int) bool {
	if minLoc > 0 && len(s.slots) >= minLoc && s.locations() < minLoc {
		return true
	}
	dom, spot, fresh := "", 0, false
	for _, sl := range s.slots {
		if !s.isSpot(sl.offer) {
			continue
		}
		d := s.wp.ix.offers[sl.offer].domain
		if spot > 0 && d != dom {
			return false
		}
		dom, spot, fresh = d, spot+1, fresh || sl.replica < 0
	}
	return spot >= 2 && fresh
}

// rulesBroken is mayBreakRules knowing how many locations and spot domains the choice set offers.
func (s *selection) rulesBroken(minLoc, nLocs, nDoms int) bool {
	if minLoc > 0 && len(s.slots) >= minLoc && s.locations() < min(minLoc, nLocs) {
		return true
	}
	d, n := s.spotDomains()
	if n < 2 || d >= 2 || nDoms < 2 {
		return false
	}
	for _, sl := range s.slots {
		if sl.replica < 0 && s.isSpot(sl.offer) {
			return true
		}
	}
	return false
}

// optimize replaces the greedy set by the cheapest set of the same size that keeps the rules,
// when the greedy set breaks one. It returns false, leaving the set as it was, when no set keeps
// them or when the search runs out of budget; true when the set keeps the rules.
func (s *selection) optimize(minLoc int) bool {
	n := len(s.slots)
	if n == 0 || !s.mayBreakRules(minLoc) {
		return true
	}
	e := &s.wp.exact
	nLocs, nDoms := s.exactItems(e, n)
	if !s.rulesBroken(minLoc, nLocs, nDoms) {
		return true
	}
	e.reset(nDoms)
	if minLoc > 0 && n >= minLoc {
		e.locTarget = min(minLoc, nLocs)
	}
	e.needSpread = nDoms >= 2
	if s.rate.on {
		e.needRate = s.rate.floor
	}
	e.dfs(0, n, 0)
	if e.aborted || !e.found {
		return false
	}
	s.replaceWith(e)
	return true
}

// reset clears the search state for a choice set with nDoms spot domains.
func (e *exactSearch) reset(nDoms int) {
	e.locTarget, e.needSpread, e.best, e.found = 0, false, math.Inf(1), false
	e.needRate, e.rate = 0, 0
	e.nodes, e.aborted, e.locs, e.spot, e.fresh, e.doms = 0, false, 0, 0, 0, 0
	e.counts = zeroed(e.counts, len(e.items))
	e.locUse = zeroed(e.locUse, len(e.locFree))
	e.domUse = zeroed(e.domUse, nDoms)
	e.domPen = slices.Grow(e.domPen[:0], nDoms)[:nDoms]
	clear(e.domPen)
}

func zeroed(v []int, n int) []int {
	v = slices.Grow(v[:0], n)[:n]
	clear(v)
	return v
}

// exactItems fills e with the choice set: the incumbents, then the candidate offers, with room
// counted as if the set's own new launches were given back. It returns the number of distinct
// locations and spot domains in it.
func (s *selection) exactItems(e *exactSearch, n int) (nLocs, nDoms int) {
	e.items, e.locFree, e.locNames, e.domNames = e.items[:0], e.locFree[:0], e.locNames[:0], e.domNames[:0]
	// own counts the set's new launches on offer oi (or, with byLoc, at its location).
	own := func(oi int, byLoc bool) int {
		k := 0
		for _, sl := range s.slots {
			if sl.replica < 0 && (sl.offer == oi || byLoc && s.wp.ix.offers[sl.offer].o.Location == s.wp.ix.offers[oi].o.Location) {
				k++
			}
		}
		return k
	}
	add := func(o option, oi, capacity int, cost float64, fresh bool) {
		info := &s.wp.ix.offers[oi]
		it := exactItem{opt: o, cost: cost, cap: capacity, loc: nameID(&e.locNames, info.o.Location), dom: -1, fresh: fresh}
		if s.rate.on {
			it.rate = s.rateOf(oi)
		}
		if len(e.locFree) < len(e.locNames) {
			free := -1
			if f, ok := s.wp.ix.locFree[info.o.Location]; ok {
				free = max(f+own(oi, true), 0)
			}
			e.locFree = append(e.locFree, free)
		}
		if info.o.Market == MarketSpot {
			it.dom = nameID(&e.domNames, info.domain)
			it.pen = info.o.PricePerHour * s.wp.p.HazardCostWeight * info.risk.hazard * s.window.Hours()
		}
		e.items = append(e.items, it)
	}
	for i, in := range s.incs {
		add(option{inc: i, cand: -1}, in.offer, 1, in.cost, false)
	}
	for c, oi32 := range s.wp.cand {
		oi := int(oi32)
		room := n
		if f := s.wp.ix.offers[oi].free; f >= 0 {
			room = min(room, f+own(oi, false))
		}
		if f, ok := s.wp.ix.locFree[s.wp.ix.offers[oi].o.Location]; ok {
			room = min(room, f+own(oi, true))
		}
		if room > 0 {
			add(option{inc: -1, cand: c}, oi, room, s.newCost(oi), true)
		}
	}
	slices.SortStableFunc(e.items, func(a, b exactItem) int { return cmp.Compare(a.cost, b.cost) })
	e.maxRate = 0
	for _, it := range e.items {
		e.maxRate = max(e.maxRate, it.rate)
	}
	return len(e.locNames), len(e.domNames)
}

// nameID is v's position in names, appending it when new.
func nameID(names *[]string, v string) int {
	if i := slices.Index(*names, v); i >= 0 {
		return i
	}
	*names = append(*names, v)
	return len(*names) - 1
}

func (e *exactSearch) dfs(i, r int, cost float64) {
	if e.nodes++; e.nodes > exactNodeBudget {
		e.aborted = true
		return
	}
	if r == 0 {
		e.leaf(cost)
		return
	}
	if i == len(e.items) || e.locs+r < e.locTarget {
		return
	}
	if e.needRate > 0 && e.rate+float64(r)*e.maxRate < e.needRate-rateSlack(e.needRate) {
		return // even the fastest items cannot bring the set to its rate
	}
	it := &e.items[i]
	if cost+float64(r)*it.cost >= e.best-1e-9 {
		return
	}
	k := min(it.cap, r)
	if it.fresh && e.locFree[it.loc] >= 0 {
		k = min(k, e.locFree[it.loc])
	}
	for ; k >= 0 && !e.aborted; k-- {
		e.take(it, k)
		e.counts[i] = k
		e.dfs(i+1, r-k, cost+float64(k)*it.cost)
		e.take(it, -k)
	}
	e.counts[i] = 0
}

// take books k replicas of item it in the search state (negative k gives them back).
func (e *exactSearch) take(it *exactItem, k int) {
	if k == 0 {
		return
	}
	if e.locUse[it.loc] == 0 {
		e.locs++
	}
	e.locUse[it.loc] += k
	if e.locUse[it.loc] == 0 {
		e.locs--
	}
	e.rate += float64(k) * it.rate
	if it.fresh && e.locFree[it.loc] >= 0 {
		e.locFree[it.loc] -= k
	}
	if it.dom < 0 {
		return
	}
	if e.domUse[it.dom] == 0 {
		e.doms++
	}
	e.domUse[it.dom] += k
	if e.domUse[it.dom] == 0 {
		e.doms--
	}
	e.domPen[it.dom] += float64(k) * it.pen
	e.spot += k
	if it.fresh {
		e.fresh += k
	}
}

// leaf scores a complete set: it must keep the rules; its cost adds the spread penalty the greedy
// fill charges (each spot replica pays its domain's risk once per replica already there).
func (e *exactSearch) leaf(cost float64) {
	if e.locs < e.locTarget || (e.needSpread && e.spot >= 2 && e.fresh > 0 && e.doms < 2) {
		return
	}
	if e.rate < e.needRate-rateSlack(e.needRate) {
		return
	}
	for d, k := range e.domUse {
		if k > 1 {
			cost += float64(k-1) / 2 * e.domPen[d]
		}
	}
	if cost < e.best-1e-12 {
		e.best, e.found = cost, true
		e.bestCounts = append(e.bestCounts[:0], e.counts...)
	}
}

// replaceWith swaps the set for the search's best one.
func (s *selection) replaceWith(e *exactSearch) {
	for i := len(s.slots) - 1; i >= 0; i-- {
		s.remove(i)
	}
	for i, k := range e.bestCounts {
		for range k {
			s.add(e.items[i].opt, "")
		}
	}
}
