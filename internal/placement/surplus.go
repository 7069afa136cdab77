package placement

import (
	"cmp"
	"math"
	"slices"
)

// settleSurplus decides the fate of live replicas outside the desired set. Make-before-break: one
// is drained only while the ready replicas left after draining it still meet the need; launching
// ones go first, then the most expensive. The rest are kept until their replacements are ready.
func (wp *workloadPlanner) settleSurplus(out *wplan, invalid []int, forced Reason) {
	out.kept, out.drains = out.kept[:0], out.drains[:0]
	in := map[int]bool{}
	for _, sl := range out.desired {
		if sl.replica >= 0 {
			in[sl.replica] = true
		}
	}
	ready, readyRate := 0, 0.0
	var surplus []int
	for _, ri := range out.live {
		if wp.s.Replicas[ri].State == StateReady {
			ready++
			readyRate += wp.replicaRate(out, ri)
		}
		if !in[ri] {
			surplus = append(surplus, ri)
		}
	}
	wp.sortByPriceDesc(surplus)
	for _, ri := range surplus {
		isReady := wp.s.Replicas[ri].State == StateReady
		r := wp.replicaRate(out, ri)
		// A ready replica stays while the others cannot meet the need without it; a launching
		// one stays while the need is not met, since it may be the first to become ready.
		if (isReady && !out.covers(ready-1, readyRate-r)) || (!isReady && !out.covers(ready, readyRate)) {
			out.kept = append(out.kept, ri)
			continue
		}
		if isReady {
			ready, readyRate = ready-1, readyRate-r
		}
		out.drains = append(out.drains, drainItem{replica: ri, reason: wp.drainReason(out, ri, invalid, forced)})
	}
}

// replicaRate is what replica ri serves for the plan's workload: 1 for a workload planned in
// replicas, its model's rate (0 when it has none) for one planned by rate.
func (wp *workloadPlanner) replicaRate(out *wplan, ri int) float64 {
	if !out.rated {
		return 1
	}
	if oi, ok := wp.ix.byID[wp.s.Replicas[ri].Offer]; ok {
		return modelRate(out.w, wp.ix.offers[oi].o.GPUModel)
	}
	return 0
}

// drainReason says why a surplus replica goes: it no longer qualifies (residency), a budget asked
// (forced), a newer replica of the desired set took its place (cheaper_offer), or fewer replicas
// are needed (demand_down).
func (wp *workloadPlanner) drainReason(out *wplan, ri int, invalid []int, forced Reason) Reason {
	switch {
	case containsInt(invalid, ri):
		return ReasonResidency
	case forced != "":
		return forced
	case out.rated && !out.remixed:
		return ReasonDemandDown // the set kept its running replicas: this one is no longer needed
	}
	since := wp.s.Replicas[ri].Since
	for _, sl := range out.desired {
		if sl.replica < 0 || wp.s.Replicas[sl.replica].Since.After(since) {
			return ReasonCheaperOffer
		}
	}
	return ReasonDemandDown
}

func (wp *workloadPlanner) newSlots(out *wplan) int {
	n := 0
	for _, sl := range out.desired {
		if sl.replica < 0 {
			n++
		}
	}
	return n
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (wp *workloadPlanner) sortByPriceDesc(reps []int) {
	price := func(ri int) float64 {
		if oi, ok := wp.ix.byID[wp.s.Replicas[ri].Offer]; ok {
			return wp.ix.offers[oi].o.PricePerHour
		}
		return math.Inf(1)
	}
	slices.SortStableFunc(reps, func(a, b int) int {
		ra, rb := wp.s.Replicas[a].State == StateReady, wp.s.Replicas[b].State == StateReady
		if ra != rb { // launching replicas go first: draining them loses no ready capacity
			if !ra {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(price(b), price(a)), cmp.Compare(wp.s.Replicas[a].ID, wp.s.Replicas[b].ID))
	})
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
		case grow > slack || growN > 0 || !out.remixed:
			// A set that keeps its running replicas launches only for what they lack.
			sl.reason, grow, growN = ReasonDemandUp, grow-r, growN-1
		default:
			sl.reason = ReasonCheaperOffer
		}
		if sl.reason != ReasonCheaperOffer && spotAllowed && !wp.isSpot(sl.offer) {
			sl.reason = ReasonFallback
		}
	}
}
