package placement

import (
	"slices"
	"time"
)

// selection builds a workload's desired set: greedy by comparable cost, then repaired for the
// spread and location rules, then hedged and backed by fallback capacity.
type selection struct {
	wp       *workloadPlanner
	w        *Workload
	window   time.Duration
	slots    []slot
	usedInc  map[int]bool // replica index → in the set
	incs     []incumbent
	newCount []int // per candidate position: new launches chosen on it
	optBuf   []option
	// spotIn counts the set's spot replicas per failure domain, so the spread penalty asked for
	// every option of every fill step costs a lookup, not a scan of the set.
	spotIn map[string]int
	// rate is set for a workload planned by rate (see rateselect.go).
	rate rateNeed
}

func newSelection(wp *workloadPlanner, w *Workload, window time.Duration) *selection {
	wp.newCount = slices.Grow(wp.newCount[:0], len(wp.cand))[:len(wp.cand)]
	clear(wp.newCount)
	clear(wp.usedInc)
	if wp.spotIn == nil {
		wp.spotIn = map[string]int{}
	}
	clear(wp.spotIn)
	return &selection{wp: wp, w: w, window: window, usedInc: wp.usedInc, newCount: wp.newCount,
		optBuf: wp.optBuf[:0], spotIn: wp.spotIn}
}

// option is something that can join the set: an incumbent (inc >= 0) or a launch on candidate
// position cand.
type option struct {
	inc  int
	cand int
	cost float64
}

func (s *selection) offerOf(o option) int {
	if o.inc >= 0 {
		return s.incs[o.inc].offer
	}
	return int(s.wp.cand[o.cand])
}

// newCost is the comparable cost of a new launch on offer oi for this workload.
func (s *selection) newCost(oi int) float64 {
	return rankOf(s.wp.ix.offers[oi].o.PricePerHour, s.wp.ix.offers[oi].risk, s.window, s.wp.p)
}

// hedgeCost is the comparable cost of a new launch held as a hedge: its effective price per
// launch that finds capacity. A hedge that fails to launch protects nothing, so unlike a launch
// backed by fallback capacity, its chance of finding capacity divides its price.
func (s *selection) hedgeCost(oi int) float64 {
	o := &s.wp.ix.offers[oi]
	eff := o.o.PricePerHour * (1 + s.wp.p.HazardCostWeight*o.risk.hazard*s.window.Hours())
	return eff / max(o.risk.launchChance, 1e-6)
}

// spreadPenalty makes a spot replica in a failure domain that already holds k of the set's spot
// replicas a little dearer, in proportion to the chance the domain loses them together. With a
// low hazard it only breaks ties, so cost stays first.
func (s *selection) spreadPenalty(oi int) float64 {
	o := &s.wp.ix.offers[oi]
	if o.o.Market != MarketSpot {
		return 0
	}
	k := s.spotIn[o.domain]
	return o.o.PricePerHour * s.wp.p.HazardCostWeight * o.risk.hazard * s.window.Hours() * float64(k)
}

// counted books a slot on offer oi joining (delta 1) or leaving (-1) the set in spotIn.
func (s *selection) counted(oi, delta int) {
	if o := &s.wp.ix.offers[oi]; o.o.Market == MarketSpot {
		s.spotIn[o.domain] += delta
	}
}

// options lists what can join the set now; accept filters it (nil accepts all). The list is
// reused by the next call.
func (s *selection) options(accept func(oi int) bool) []option {
	out := s.optBuf[:0]
	defer func() { s.optBuf = out[:0]; s.wp.optBuf = s.optBuf }()
	for i, in := range s.incs {
		if s.usedInc[in.replica] || (accept != nil && !accept(in.offer)) {
			continue
		}
		out = append(out, option{inc: i, cand: -1, cost: in.cost + s.spreadPenalty(in.offer)})
	}
	for c, oi := range s.wp.cand {
		if !s.wp.ix.hasRoom(int(oi)) || (accept != nil && !accept(int(oi))) {
			continue
		}
		out = append(out, option{inc: -1, cand: c, cost: s.newCost(int(oi)) + s.spreadPenalty(int(oi))})
	}
	return out
}

// cheapestOption is cheapest(s.options(accept)) without building the list: fill and hedge ask it
// once per replica of every workload.
func (s *selection) cheapestOption(accept func(oi int) bool) (option, bool) {
	return s.cheapestBy(accept, s.newCost)
}

// cheapestBy is cheapestOption with newCost giving the cost of a new launch.
func (s *selection) cheapestBy(accept func(oi int) bool, newCost func(oi int) float64) (option, bool) {
	return s.cheapestPer(accept, newCost, nil)
}

// cheapestPer is cheapestBy with each option's cost made a cost per unit of per(its offer) when
// per is set (perUnit): a workload planned by rate ranks by cost per unit served. The option's
// cost is then that figure.
func (s *selection) cheapestPer(accept func(oi int) bool, newCost, per func(oi int) float64) (option, bool) {
	best, found := option{}, false
	for i, in := range s.incs {
		if s.usedInc[in.replica] || (accept != nil && !accept(in.offer)) {
			continue
		}
		c := in.cost + s.spreadPenalty(in.offer)
		if per != nil {
			c = perUnit(c, per(in.offer))
		}
		if !found || c < best.cost {
			best, found = option{inc: i, cand: -1, cost: c}, true
		}
	}
	for c, oi := range s.wp.cand {
		if !s.wp.ix.hasRoom(int(oi)) || (accept != nil && !accept(int(oi))) {
			continue
		}
		cost := newCost(int(oi)) + s.spreadPenalty(int(oi))
		if per != nil {
			cost = perUnit(cost, per(int(oi)))
		}
		if !found || cost < best.cost {
			best, found = option{inc: -1, cand: c, cost: cost}, true
		}
	}
	return best, found
}

// perUnit is cost per unit of u. A negative comparable cost (an incumbent in its cooldown, or
// one whose move would cost more than it runs for) is a gain for keeping it: it is multiplied by
// u, so that there too the option bringing more units ranks first.
func perUnit(cost, u float64) float64 {
	if cost < 0 {
		return cost * u
	}
	return cost / u
}

func cheapest(opts []option) (option, bool) {
	if len(opts) == 0 {
		return option{}, false
	}
	best := opts[0]
	for _, o := range opts[1:] {
		if o.cost < best.cost {
			best = o
		}
	}
	return best, true
}

// add puts an option in the set.
func (s *selection) add(o option, reason Reason) {
	if o.inc >= 0 {
		in := s.incs[o.inc]
		s.usedInc[in.replica] = true
		s.slots = append(s.slots, slot{offer: in.offer, replica: in.replica, reason: reason})
		s.counted(in.offer, 1)
		return
	}
	oi := int(s.wp.cand[o.cand])
	s.newCount[o.cand]++
	s.wp.ix.take(oi, 1)
	s.slots = append(s.slots, slot{offer: oi, replica: -1, reason: reason})
	s.counted(oi, 1)
}

// remove takes slot i out of the set.
func (s *selection) remove(i int) {
	sl := s.slots[i]
	if sl.replica >= 0 {
		delete(s.usedInc, sl.replica)
	} else {
		s.wp.ix.take(sl.offer, -1)
		for c, oi := range s.wp.cand {
			if int(oi) == sl.offer && s.newCount[c] > 0 {
				s.newCount[c]--
				break
			}
		}
	}
	s.slots = append(s.slots[:i], s.slots[i+1:]...)
	s.counted(sl.offer, -1)
}

// fill adds the cheapest options until the set holds n replicas or nothing is left.
func (s *selection) fill(incs []incumbent, n int) {
	s.incs = incs
	for len(s.slots) < n && !s.wp.halted() {
		o, ok := s.cheapestOption(nil)
		if !ok {
			return
		}
		s.add(o, "")
	}
}

// slotCost is the comparable cost of a slot already in the set.
func (s *selection) slotCost(sl slot) float64 {
	if sl.replica >= 0 {
		for _, in := range s.incs {
			if in.replica == sl.replica {
				return in.cost
			}
		}
	}
	return s.newCost(sl.offer)
}

func (s *selection) isSpot(oi int) bool { return s.wp.ix.offers[oi].o.Market == MarketSpot }

// spotDomains counts the distinct failure domains of the set's spot replicas, and its spot ones.
func (s *selection) spotDomains() (domains, spot int) {
	seen := map[string]bool{}
	for _, sl := range s.slots {
		if s.isSpot(sl.offer) {
			spot++
			seen[s.wp.ix.offers[sl.offer].domain] = true
		}
	}
	return len(seen), spot
}

// fixSpread makes sure two or more spot replicas do not share one failure domain when another
// domain is on offer: it makes the cheapest swap of a new spot launch for a spot launch in another
// domain (improve may then trade spot for cheaper non-spot capacity). Running replicas are not moved
// for spread alone: a move costs a cold start, and hedging answers the risk they carry.
func (s *selection) fixSpread(minLoc int) bool {
	d, n := s.spotDomains()
	if n < 2 || d >= 2 {
		return false
	}
	var only string
	for _, sl := range s.slots {
		if s.isSpot(sl.offer) {
			only = s.wp.ix.offers[sl.offer].domain
			break
		}
	}
	other := func(oi int) bool { return s.isSpot(oi) && s.wp.ix.offers[oi].domain != only }
	if len(s.options(other)) == 0 {
		return false // no other domain on offer: one domain is all there is
	}
	locs := s.locations()
	return s.bestSwap(s.options(other), func(sl slot) bool { return sl.replica < 0 && s.isSpot(sl.offer) },
		func() bool { return s.locations() >= min(locs, minLoc) })
}

// fixLocations swaps replicas until the set spans minLoc locations or no swap helps.
func (s *selection) fixLocations(minLoc int) bool {
	changed := false
	for range minLoc {
		locs := map[string]int{}
		for _, sl := range s.slots {
			locs[s.wp.ix.offers[sl.offer].o.Location]++
		}
		if len(locs) >= minLoc || len(s.slots) < minLoc {
			return changed
		}
		alts := s.options(func(oi int) bool { return locs[s.wp.ix.offers[oi].o.Location] == 0 })
		d, n := s.spotDomains()
		spreadOK := n < 2 || d >= 2
		keep := func() bool { d, n := s.spotDomains(); return !spreadOK || n < 2 || d >= 2 }
		if !s.bestSwap(alts, func(sl slot) bool { return locs[s.wp.ix.offers[sl.offer].o.Location] >= 2 }, keep) {
			return changed
		}
		changed = true
	}
	return changed
}
