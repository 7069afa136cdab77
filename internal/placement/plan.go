package placement

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"strconv"
	"time"
)

// Plan decides, for every workload of the snapshot, what to launch and what to drain so each keeps
// its ready replicas at the lowest cost the rules allow. It is pure: the same snapshot, policy and
// time give the same Decision.
func Plan(s Snapshot, p Policy, now time.Time) Decision {
	return NewPlanner(s, p, now).Decision()
}

// Planner holds a planned snapshot and the index built for it, so that a change touching one
// workload (a reclaim, a launch that failed) can be re-planned without re-planning the estate.
// A Planner is not safe for concurrent use.
type Planner struct {
	s     Snapshot
	p     Policy
	now   time.Time
	ix    *index
	wp    workloadPlanner
	reps  map[string][]int // workload id → indices of its replicas
	wIdx  map[string]int   // workload id → index in s.Workloads
	order []int            // workload indices in planning order
	plans []*wplan         // by workload index
	rIdx  map[string]int   // replica id → index
	dec   Decision
	// stale says dec's actions predate an Apply; beforeDelta is the change in spend before that
	// an Apply's replica updates make.
	stale       bool
	beforeDelta float64
}

// NewPlanner plans the whole snapshot. The planner keeps s: the caller must not change its slices
// afterwards (Apply never writes into them: it copies what it changes).
func NewPlanner(s Snapshot, p Policy, now time.Time) *Planner {
	pl := &Planner{s: s, p: p.withDefaults(), now: now}
	pl.ix = buildIndex(&pl.s, &pl.p, now)
	pl.wp = workloadPlanner{ix: pl.ix, s: &pl.s, p: &pl.p, now: now, usedInc: map[int]bool{}}
	pl.reps = make(map[string][]int, len(s.Workloads))
	pl.rIdx = make(map[string]int, len(s.Replicas))
	for i, r := range pl.s.Replicas {
		pl.reps[r.Workload] = append(pl.reps[r.Workload], i)
		pl.rIdx[r.ID] = i
	}
	for _, reps := range pl.reps { // a workload's replicas in id order: input order carries no meaning
		slices.SortFunc(reps, func(a, b int) int { return compareStrings(pl.s.Replicas[a].ID, pl.s.Replicas[b].ID) })
	}
	pl.wIdx = make(map[string]int, len(s.Workloads))
	pl.order = make([]int, len(s.Workloads))
	for i := range pl.s.Workloads {
		pl.wIdx[pl.s.Workloads[i].ID] = i
		pl.order[i] = i
	}
	// Workloads that lost replicas plan first, so their replacements get scarce capacity; then
	// by id, so the order never depends on the input's order.
	slices.SortFunc(pl.order, func(a, b int) int {
		la, lb := pl.lost(a), pl.lost(b)
		if la != lb {
			return lb - la
		}
		return compareStrings(pl.s.Workloads[a].ID, pl.s.Workloads[b].ID)
	})
	pl.plans = make([]*wplan, len(s.Workloads))
	for _, wi := range pl.order {
		w := &pl.s.Workloads[wi]
		pl.plans[wi] = pl.wp.plan(w, pl.reps[w.ID])
	}
	pl.applyBudgets()
	pl.dec = pl.assemble()
	return pl
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// lost counts a workload's reclaimed replicas.
func (pl *Planner) lost(wi int) int {
	n := 0
	for _, ri := range pl.reps[pl.s.Workloads[wi].ID] {
		if pl.s.Replicas[ri].State == StateReclaimed {
			n++
		}
	}
	return n
}

// Decision returns the plan for the snapshot as it stands.
func (pl *Planner) Decision() Decision {
	if pl.stale {
		pl.dec = pl.assemble()
		pl.stale = false
	}
	return pl.dec
}

// price is the price per hour of offer id, 0 when unknown.
func (pl *Planner) price(offerID string) float64 {
	if i, ok := pl.ix.byID[offerID]; ok {
		return pl.s.Offers[i].PricePerHour
	}
	return 0
}

// assemble turns the workload plans into a Decision.
func (pl *Planner) assemble() Decision {
	d := Decision{At: pl.now, Hazards: map[string]float64{}}
	for _, r := range pl.s.Replicas {
		switch r.State {
		case StateLaunching, StateReady, StateDraining, StateReclaimed:
			d.CostPerHourBefore += pl.price(r.Offer)
		}
	}
	planned := make(map[string]bool, len(pl.order))
	n := 0
	for _, wi := range pl.order {
		n += len(pl.plans[wi].desired) + len(pl.plans[wi].drains) + len(pl.plans[wi].approvals)
	}
	d.Actions = make([]Action, 0, n)
	for _, wi := range pl.order {
		wpl := pl.plans[wi]
		planned[wpl.w.ID] = true
		d.Actions = append(d.Actions, pl.actions(wpl)...)
		d.CostPerHourAfter += pl.costAfter(wpl)
		if wpl.shortfall > 0 || wpl.why != "" {
			d.Shortfalls = append(d.Shortfalls, Shortfall{Workload: wpl.w.ID, Wanted: wpl.need,
				Placed: wpl.need - wpl.shortfall, Why: wpl.why})
		}
	}
	for _, r := range pl.s.Replicas { // replicas of workloads the snapshot does not list run on
		if !planned[r.Workload] && (r.State == StateLaunching || r.State == StateReady) {
			d.CostPerHourAfter += pl.price(r.Offer)
		}
	}
	for i := range pl.ix.offers {
		if o := pl.ix.offers[i]; o.o.Market == MarketSpot && len(o.o.History) > 0 {
			d.Hazards[o.o.ID] = o.risk.hazard
		}
	}
	return d
}

// costAfter is a workload's spend per hour once its actions are applied: the desired set and the
// replicas kept for make-before-break.
func (pl *Planner) costAfter(wpl *wplan) float64 {
	c := 0.0
	for _, sl := range wpl.desired {
		c += pl.s.Offers[sl.offer].PricePerHour
	}
	for _, ri := range wpl.kept {
		c += pl.price(pl.s.Replicas[ri].Offer)
	}
	return c
}

// actions builds a workload's actions: launches grouped by offer and reason, then drains grouped
// the same way, then any approval request.
func (pl *Planner) actions(wpl *wplan) []Action {
	var out []Action
	type key struct {
		offer  int
		reason Reason
	}
	idx := map[key]int{}
	for _, sl := range wpl.desired {
		if sl.replica >= 0 {
			continue
		}
		k := key{sl.offer, sl.reason}
		if i, ok := idx[k]; ok {
			out[i].Count++
			out[i].CostPerHour += pl.s.Offers[sl.offer].PricePerHour
			continue
		}
		idx[k] = len(out)
		out = append(out, Action{Kind: ActionLaunch, Workload: wpl.w.ID, Offer: pl.s.Offers[sl.offer].ID,
			Count: 1, Reason: sl.reason, CostPerHour: pl.s.Offers[sl.offer].PricePerHour})
	}
	dIdx := map[string]int{}
	for _, dr := range wpl.drains {
		r := &pl.s.Replicas[dr.replica]
		k := r.Offer + "\x00" + string(dr.reason)
		if i, ok := dIdx[k]; ok {
			out[i].Replicas = append(out[i].Replicas, r.ID)
			out[i].Count++
			out[i].CostPerHour -= pl.price(r.Offer)
			continue
		}
		dIdx[k] = len(out)
		out = append(out, Action{Kind: ActionDrain, Workload: wpl.w.ID, Offer: r.Offer, Count: 1,
			Replicas: []string{r.ID}, Reason: dr.reason, CostPerHour: -pl.price(r.Offer)})
	}
	out = append(out, wpl.approvals...)
	for i := range out {
		out[i].ID = pl.actionID(&out[i], i)
	}
	return out
}

// actionID hashes what the action is and when it was planned, so a re-sent plan carries the same
// ids and a different plan different ones.
func (pl *Planner) actionID(a *Action, n int) string {
	h := fnv.New128a()
	for _, s := range []string{pl.now.UTC().Format(time.RFC3339Nano), a.Workload, string(a.Kind),
		a.Offer, string(a.Reason), strconv.Itoa(a.Count), strconv.Itoa(n),
		strconv.FormatUint(pl.s.Seed, 16)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, r := range a.Replicas {
		h.Write([]byte(r))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
