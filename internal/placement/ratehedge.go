package placement

import (
	"cmp"
	"math"
	"slices"
)

// The fallback and the hedge of a workload planned by rate: hedge.go's rules, with what a launch
// brings or a loss takes counted in rate and replicas together, since replicas of several models
// serve different rates.

// tally is the distribution of what independent events add up to (a rate and a count), kept only
// while the sum falls short of a threshold (reached): outcomes that reach it are summed in done,
// so the list stays as short as the few sums below the threshold.
type tally struct {
	states, spare []tallyState // spare is the buffer the next add fills
	at            map[tallyKey]int
	done          float64
	reached       func(rate float64, n int) bool
}

// tallyKey is a sum. Sums equal but for rounding stay apart: that costs a state, not accuracy.
type tallyKey struct {
	rate float64
	n    int
}

type tallyState struct {
	rate float64
	n    int
	p    float64
}

func newTally(reached func(rate float64, n int) bool) tally {
	t := tally{reached: reached, at: map[tallyKey]int{}}
	if reached(0, 0) {
		t.done = 1
	} else {
		t.states = []tallyState{{p: 1}}
	}
	return t
}

// add counts one more event that, with the given chance, adds rate and n.
func (t *tally) add(rate float64, n int, chance float64) {
	next := t.spare[:0]
	clear(t.at)
	for _, st := range t.states {
		next = t.merge(next, tallyState{st.rate, st.n, st.p * (1 - chance)})
		hit := tallyState{st.rate + rate, st.n + n, st.p * chance}
		if t.reached(hit.rate, hit.n) {
			t.done += hit.p
		} else {
			next = t.merge(next, hit)
		}
	}
	t.states, t.spare = next, t.states
}

// merge adds st to list, into the state with the same sum when there is one.
func (t *tally) merge(list []tallyState, st tallyState) []tallyState {
	k := tallyKey{st.rate, st.n}
	if i, ok := t.at[k]; ok {
		list[i].p += st.p
		return list
	}
	t.at[k] = len(list)
	return append(list, st)
}

// coverChance is the chance the set serves its need once its launches are done: running
// replicas and non-spot launches are taken as sure, each new spot launch finds capacity with its
// own chance.
func (s *selection) coverChance() float64 {
	sure, n := 0.0, 0
	for _, sl := range s.slots {
		if sl.replica < 0 && s.isSpot(sl.offer) {
			continue
		}
		sure, n = sure+s.rateOf(sl.offer), n+1
	}
	needR, needN := s.rate.need-sure, s.rate.min-n
	t := newTally(func(r float64, k int) bool { return r >= needR-rateSlack(s.rate.need) && k >= needN })
	for _, sl := range s.slots {
		if sl.replica < 0 && s.isSpot(sl.offer) {
			t.add(s.rateOf(sl.offer), 1, s.wp.ix.offers[sl.offer].risk.launchChance)
		}
	}
	return t.done
}

// sureRate is what the set's running replicas and non-spot launches serve.
func (s *selection) sureRate() float64 {
	sum := 0.0
	for _, sl := range s.slots {
		if sl.replica >= 0 || !s.isSpot(sl.offer) {
			sum += s.rateOf(sl.offer)
		}
	}
	return sum
}

// fallbackRate is fallback for a workload planned by rate: while the set's launches are less
// likely than fallbackConfidence to serve the need, it adds the option cheapest per
// useful unit among non-spot capacity and spot offers the set has not tried yet.
func (s *selection) fallbackRate() {
	if s.wp.p.DisableFallback {
		return
	}
	tried := map[int]bool{}
	for _, sl := range s.slots {
		if sl.replica < 0 && s.isSpot(sl.offer) {
			tried[sl.offer] = true
		}
	}
	for s.coverChance() < s.fallbackConfidence() && !s.wp.halted() {
		left := s.rate.need - s.sureRate()
		o, ok := s.cheapestPer(func(oi int) bool { return !s.isSpot(oi) || !tried[oi] }, s.newCost,
			func(oi int) float64 { return useful(s.rateOf(oi), left) })
		if !ok {
			return
		}
		s.add(o, ReasonFallback)
		if oi := s.offerOf(o); o.inc < 0 && s.isSpot(oi) {
			tried[oi] = true
		}
	}
}

// hedgeRate is hedge for a workload planned by rate: while the chance of losing, within the
// loss window, enough of the set that it no longer serves its need is above hedgeRisk,
// it holds one more replica (bestHedge), up to Policy.MaxHedge.
func (s *selection) hedgeRate() {
	p := s.wp.p
	if p.MaxHedge <= 0 || !s.covered() || (s.rate.need <= 0 && s.rate.min == 0) {
		return
	}
	for h := 0; h < p.MaxHedge && s.lossChance() > s.hedgeRisk(); h++ {
		if s.w.MaxReplicas > 0 && len(s.slots) >= s.w.MaxReplicas {
			return
		}
		o, ok := s.bestHedge()
		if !ok {
			return
		}
		s.add(o, ReasonHedge)
	}
}

// lossChance is lossTail counted in rate: the chance that the failure domains reclaimed within
// the loss window take so much of the set that what is left serves less than the need or counts
// fewer replicas than the minimum. The spare is what the set serves beyond the need, its hedges
// and the rounding up of whole replicas alike. Fallback launches are left out: they back launches
// that may find no capacity, and a launch unlikely to launch is no spare.
func (s *selection) lossChance() float64 { return s.lossChanceWith(0) }

// lossChanceWith is lossChance with one more replica that cannot be lost serving extra (none
// when extra is 0): no hedge of at most that rate can bring the chance lower.
func (s *selection) lossChanceWith(extra float64) float64 {
	type dom struct {
		p, rate float64
		n       int
	}
	var doms []dom
	at := map[string]int{}
	total, n := 0.0, 0
	for _, sl := range s.slots {
		if sl.reason == ReasonFallback {
			continue
		}
		r := s.rateOf(sl.offer)
		total, n = total+r, n+1
		o := &s.wp.ix.offers[sl.offer]
		if o.o.Market != MarketSpot {
			continue
		}
		i, ok := at[o.domain]
		if !ok {
			i = len(doms)
			at[o.domain] = i
			doms = append(doms, dom{})
		}
		doms[i].rate += r
		doms[i].n++
		doms[i].p = max(doms[i].p, 1-math.Exp(-o.risk.hazard*s.window.Hours()))
	}
	if extra > 0 {
		total, n = total+extra, n+1
	}
	spareR, spareN := total-s.rate.need, n-s.rate.min
	t := newTally(func(r float64, k int) bool { return r > spareR+rateSlack(s.rate.need) || k > spareN })
	for _, d := range doms {
		t.add(d.rate, d.n, d.p)
	}
	return t.done
}

// bestHedge is the replica to hold as a hedge. Among the options that bring the loss chance
// within hedgeRisk it is the cheapest; when none does alone, the one that brings the most
// rate per unit of cost, so the next hedge has the least left to cover. A new launch costs its
// hedgeCost (its price per launch that finds capacity), a running replica its comparable cost.
// Options are tried cheapest first, so the search usually ends after a few.
func (s *selection) bestHedge() (option, bool) {
	var opts []option
	for i, in := range s.incs {
		if !s.usedInc[in.replica] && s.hedgeable(in.offer) {
			opts = append(opts, option{inc: i, cand: -1, cost: in.cost + s.spreadPenalty(in.offer)})
		}
	}
	for c, oi32 := range s.wp.cand {
		if oi := int(oi32); s.wp.ix.hasRoom(oi) && s.hedgeable(oi) {
			opts = append(opts, option{inc: -1, cand: c, cost: s.hedgeCost(oi) + s.spreadPenalty(oi)})
		}
	}
	if len(opts) == 0 {
		return option{}, false
	}
	slices.SortStableFunc(opts, func(a, b option) int { return cmp.Compare(a.cost, b.cost) })
	most := 0.0
	for _, o := range opts {
		most = max(most, s.rateOf(s.offerOf(o)))
	}
	// When not even a replica of the largest rate that cannot be lost would do, none will.
	hopeless := s.lossChanceWith(most) > s.hedgeRisk()
	for _, o := range opts {
		if hopeless || s.wp.halted() {
			break
		}
		s.add(o, ReasonHedge)
		ok := s.lossChance() <= s.hedgeRisk()
		s.remove(len(s.slots) - 1)
		if ok {
			return o, true
		}
	}
	best := opts[0]
	for _, o := range opts[1:] {
		if perUnit(o.cost, s.rateOf(s.offerOf(o))) < perUnit(best.cost, s.rateOf(s.offerOf(best))) {
			best = o
		}
	}
	return best, true
}
