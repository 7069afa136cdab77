package placement

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// slot is one replica of a workload's desired set: a replica that runs already (incumbent) or a
// new launch on an offer.
type slot struct {
	offer   int
	replica int // index in Snapshot.Replicas; -1 for a new launch
	reason  Reason
}

// launchItem and drainItem are the pieces a workload's actions are built from.
type launchItem struct {
	offer  int
	reason Reason
}

type drainItem struct {
	replica int
	reason  Reason
}

// wplan is the plan for one workload before it is turned into actions.
type wplan struct {
	w         *Workload
	need      int
	desired   []slot
	kept      []int // live replicas outside the desired set kept until replacements are ready
	drains    []drainItem
	shortfall int
	why       string
	// live is every launching or ready replica of the workload; reclaimed counts those lost.
	live      []int
	reclaimed int
	// invalid are live replicas whose offer no longer qualifies; approvals are budget cuts below
	// the minimum that wait for a person.
	invalid   []int
	approvals []Action
	// For a workload planned by rate (rated): the rate it needs and the set's replicas serve,
	// the least replicas it keeps, and what its reclaimed replicas served. need is then the
	// desired set's replica count (plus the shortfall), an outcome of the plan.
	rated                bool
	needRate, placedRate float64
	minCount             int
	lostRate             float64
	// remixed says the set leaves running replicas for cheaper ones (chooseRate): only then are
	// its launches beyond what is missing, and the drains it makes, moves.
	remixed bool
}

// covers says whether n ready replicas serving rate meet the plan's need.
func (out *wplan) covers(n int, rate float64) bool {
	if !out.rated {
		return n >= out.need
	}
	return n >= out.minCount && rate >= out.needRate-rateSlack(out.needRate)
}

// shortfallOf is the Shortfall the plan reports.
func (out *wplan) shortfallOf() Shortfall {
	sf := Shortfall{Workload: out.w.ID, Wanted: out.need, Placed: out.need - out.shortfall, Why: out.why}
	if out.rated {
		sf.WantedRate, sf.PlacedRate = out.needRate, out.placedRate
	}
	return sf
}

// Target is how many ready replicas w needs: its demand, at least its minimum, at most its maximum
// and the planner's limit. For a workload planned by rate the count is an outcome of the plan:
// Target is then the least it may be (MinReplicas, MinLocations), and Planner.Target the count
// the plan chose.
func Target(w *Workload) int {
	if rated(w) {
		lo, _ := rateCounts(w)
		return lo
	}
	n, _ := target(w)
	return n
}

// target is how many ready replicas w needs, and whether MaxReplicas cut it.
func target(w *Workload) (n int, capped bool) {
	n = max(w.Demand, w.MinReplicas, 0)
	if w.MaxReplicas > 0 {
		n = min(n, w.MaxReplicas)
	}
	if n > MaxReplicas {
		return MaxReplicas, true
	}
	return n, false
}

// lossWindow is how long a lost replica of w stays uncovered: reaction plus cold start.
func lossWindow(w *Workload, p *Policy) time.Duration { return w.ColdStart + p.ReactionTime }

// workloadPlanner plans one workload against the shared index. Its buffers are reused across
// workloads.
type workloadPlanner struct {
	ix   *index
	s    *Snapshot
	p    *Policy
	now  time.Time
	cand []int32
	// buffers reused across workloads
	newCount []int
	usedInc  map[int]bool
	spotIn   map[string]int
	optBuf   []option
	incBuf   []incumbent
	exact    exactSearch
	// ctx, while a plan that may be cancelled runs, is what cancels it; stopped records that it
	// was (see halted).
	ctx     context.Context
	stopped bool
	// rates is rateTable of the workload being planned, when it is planned by rate.
	rates []float64
	// plans and slots are slabs the per-workload plans are carved from, so a full re-plan
	// allocates a few large blocks rather than two small ones per workload.
	plans []wplan
	slots []slot
}

// slabSize is how many plans, or slots, one slab allocation holds.
const slabSize = 1024

// newPlan is a zeroed plan from the slab.
func (wp *workloadPlanner) newPlan() *wplan {
	if len(wp.plans) == 0 {
		wp.plans = make([]wplan, slabSize)
	}
	out := &wp.plans[0]
	wp.plans = wp.plans[1:]
	return out
}

// slotList is an empty slot list with room for n from the slab; appending beyond n reallocates
// it on its own, never into a neighbour's slots.
func (wp *workloadPlanner) slotList(n int) []slot {
	if len(wp.slots) < n {
		wp.slots = make([]slot, max(slabSize, n))
	}
	out := wp.slots[:0:n]
	wp.slots = wp.slots[n:]
	return out
}

// incumbent is a live replica competing to stay in the desired set.
type incumbent struct {
	replica int
	offer   int
	cost    float64 // comparable cost: effective price less what a move away from it would cost
	ready   bool
}

// plan decides w's desired set, what to launch and what to drain. reps are the indices of w's
// replicas in the snapshot.
func (wp *workloadPlanner) plan(w *Workload, reps []int) *wplan {
	ix, p := wp.ix, wp.p
	out := wp.newPlan()
	need, capped := target(w)
	if rated(w) {
		need, capped = rateGuess(w), false // a first guess, to size the candidate list
		wp.rates = ix.rateTable(wp.rates[:0], w)
	}
	out.w, out.need = w, need
	window := lossWindow(w, p)
	incs := wp.incBuf[:0]
	defer func() { wp.incBuf = incs[:0] }()
	var invalid []int
	for _, ri := range reps {
		r := &wp.s.Replicas[ri]
		oi, ok := ix.byID[r.Offer]
		switch {
		case r.State == StateReclaimed:
			out.reclaimed++
			if ok && rated(w) {
				out.lostRate += modelRate(w, ix.offers[oi].o.GPUModel)
			}
			continue
		case r.State != StateLaunching && r.State != StateReady:
			continue
		}
		out.live = append(out.live, ri)
		if !ok || !ix.eligible(oi, w) {
			invalid = append(invalid, ri)
			continue
		}
		incs = append(incs, incumbent{replica: ri, offer: oi, ready: r.State == StateReady,
			cost: wp.incumbentCost(w, oi, window)})
	}
	slices.SortFunc(incs, func(a, b incumbent) int {
		if a.ready != b.ready {
			if a.ready {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(wp.s.Replicas[a.replica].ID, wp.s.Replicas[b.replica].ID))
	})
	limit := out.need + max(p.MaxHedge, 0) + max(w.MinLocations, 0) + 8
	wp.cand = ix.candidates(wp.cand[:0], w, limit, p)
	sel := newSelection(wp, w, window)
	sel.slots = wp.slotList(out.need + max(p.MaxHedge, 0) + 2)
	if rated(w) {
		wp.selectByRate(out, sel, incs)
		out.desired, out.invalid = sel.slots, invalid
		wp.assignRateReasons(out, incs, invalid)
		wp.settleSurplus(out, invalid, "")
		return out
	}
	sel.fill(incs, out.need)
	sel.repair(w.MinLocations)
	switch {
	case len(sel.slots) < out.need && len(incs) == 0 && len(wp.cand) == 0:
		out.shortfall = out.need
		out.why = ix.nowhere(w)
	case len(sel.slots) < out.need:
		out.shortfall = out.need - len(sel.slots)
		out.why = "not enough eligible capacity"
	case w.MinLocations > 0 && sel.locations() < w.MinLocations:
		out.why = "not enough eligible locations"
	case capped:
		out.why = fmt.Sprintf("wants %d replicas; planned for the planner's limit of %d", max(w.Demand, w.MinReplicas), MaxReplicas)
	}
	// Fallback first: it makes the need likely covered, counting new spot launches at their chance
	// of finding capacity; the hedge then holds a spare on top of that, so a spot launch unlikely
	// to launch is never mistaken for a spare.
	sel.fallback(out.need)
	sel.hedge(out.need)
	out.desired = sel.slots
	out.invalid = invalid
	wp.assignReasons(out, incs, invalid)
	wp.settleSurplus(out, invalid, "")
	return out
}

// nowhere says why a workload with no candidate offer got none: no prices at all, no offer that
// could ever host it (its GPU models or memory, GPU count, markets or residency match none), or
// offers that could but have no room or too little chance of capacity now.
func (ix *index) nowhere(w *Workload) string {
	if len(ix.offers) == 0 {
		return WhyNoOffers
	}
	for i := range ix.offers {
		if ix.eligible(i, w) {
			return "not enough eligible capacity"
		}
	}
	return "no offer fits its GPU models or memory, GPU count, markets and residency"
}

// incumbentCost is what keeping a replica on offer oi costs, made comparable with a new launch:
// its effective price less the one-off cost of moving away (egress of the weights and a cold start
// at the current price) spread over the payback horizon, less the minimum saving a move must make.
// During the cooldown after a move an incumbent always stays.
func (wp *workloadPlanner) incumbentCost(w *Workload, oi int, window time.Duration) float64 {
	o := wp.ix.offers[oi]
	eff := o.o.PricePerHour * (1 + wp.p.HazardCostWeight*o.risk.hazard*window.Hours())
	if !w.LastMoveAt.IsZero() && wp.now.Sub(w.LastMoveAt) < wp.p.Cooldown {
		return eff - 1e9
	}
	egress := 0.0
	if o.loc != nil {
		egress = o.loc.EgressPerGB * w.WeightsGB
	}
	oneOff := egress + o.o.PricePerHour*w.ColdStart.Hours()
	return eff - oneOff/wp.p.PaybackHorizon.Hours() - wp.p.MinSavingPerHour
}

// poissonTail is P(N > k) for N ~ Poisson(lambda).
func poissonTail(lambda float64, k int) float64 {
	term := math.Exp(-lambda)
	cdf := term
	for i := 1; i <= k; i++ {
		term *= lambda / float64(i)
		cdf += term
	}
	return max(0, 1-cdf)
}

// assignReasons labels the new launches of the desired set: replacements of reclaimed replicas
// first, then of replicas that no longer qualify, then growth; a launch beyond what is missing is
// a move to a cheaper offer. Non-spot launches standing in for spot a workload allows are
// fallbacks.
func (wp *workloadPlanner) assignReasons(out *wplan, incs []incumbent, invalid []int) {
	missing := max(out.need-len(incs), 0)
	reclaim := min(out.reclaimed, missing)
	resid := min(len(invalid), missing-reclaim)
	spotAllowed := len(out.w.Markets) == 0 || containsMarket(out.w.Markets, MarketSpot)
	for i := range out.desired {
		sl := &out.desired[i]
		if sl.replica >= 0 || sl.reason != "" {
			continue
		}
		switch {
		case reclaim > 0:
			sl.reason, reclaim = ReasonReclaim, reclaim-1
		case resid > 0:
			sl.reason, resid = ReasonResidency, resid-1
		case missing-out.reclaimed-len(invalid) > 0 && missing > 0:
			sl.reason = ReasonDemandUp
		default:
			sl.reason = ReasonCheaperOffer
		}
		if missing > 0 {
			missing--
		}
		if sl.reason != ReasonCheaperOffer && spotAllowed && !wp.isSpot(sl.offer) {
			sl.reason = ReasonFallback
		}
	}
}

func containsMarket(ms []Market, m Market) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

func (wp *workloadPlanner) isSpot(oi int) bool { return wp.ix.offers[oi].o.Market == MarketSpot }
