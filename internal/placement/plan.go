package placement

import (
	"context"
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
	// nowAt and nowStr cache the text of now that action ids hash.
	nowAt  time.Time
	nowStr string
}

// NewPlanner plans the whole snapshot. The planner keeps s: the caller must not change its slices
// afterwards (Apply never writes into them: it copies what it changes).
func NewPlanner(s Snapshot, p Policy, now time.Time) *Planner {
	pl, _ := NewPlannerContext(context.Background(), s, p, now) // never done, so never stopped
	return pl
}

// NewPlannerContext is NewPlanner that stops once ctx is done, returning an error wrapping
// ErrStopped and no planner. ctx bounds this call only: Apply on the planner it returns is not
// cancelled by it.
func NewPlannerContext(ctx context.Context, s Snapshot, p Policy, now time.Time) (*Planner, error) {
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
	pl.wp.ctx = ctx
	defer func() { pl.wp.ctx = nil }()
	for _, wi := range pl.order {
		w := &pl.s.Workloads[wi]
		if pl.wp.halted() {
			return nil, stopError(ctx, w.ID)
		}
		pl.plans[wi] = pl.wp.plan(w, pl.reps[w.ID])
		if pl.wp.halted() { // mid-plan: this workload's plan is partial
			return nil, stopError(ctx, w.ID)
		}
	}
	pl.applyBudgets()
	pl.dec = pl.assemble()
	return pl, nil
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

// Target is how many replicas the plan counts as workload id's need: Target(w) for a workload
// planned in replicas; for one planned by rate, the replicas of the set chosen to cover its rate
// (hedges and fallback launches left out; a shortfall's estimate added). ok is false for a
// workload the snapshot does not list.
func (pl *Planner) Target(id string) (n int, ok bool) {
	wi, ok := pl.wIdx[id]
	if !ok {
		return 0, false
	}
	return pl.plans[wi].need, true
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
	n := 0
	for _, wi := range pl.order {
		n += len(pl.plans[wi].desired) + len(pl.plans[wi].drains) + len(pl.plans[wi].approvals)
	}
	d.Actions = make([]Action, 0, n)
	for _, wi := range pl.order {
		wpl := pl.plans[wi]
		d.Actions = pl.appendActions(d.Actions, wpl)
		d.CostPerHourAfter += pl.costAfter(wpl)
		if wpl.shortfall > 0 || wpl.why != "" {
			d.Shortfalls = append(d.Shortfalls, wpl.shortfallOf())
		}
	}
	for _, r := range pl.s.Replicas { // replicas of workloads the snapshot does not list run on
		if _, planned := pl.wIdx[r.Workload]; !planned && (r.State == StateLaunching || r.State == StateReady) {
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

// appendActions appends a workload's actions to dst: launches grouped by offer and reason, then
// drains grouped the same way, then any approval request. A workload has a handful of actions, so
// grouping scans what is built so far rather than keeping maps.
func (pl *Planner) appendActions(dst []Action, wpl *wplan) []Action {
	start := len(dst)
	for _, sl := range wpl.desired {
		if sl.replica >= 0 {
			continue
		}
		o := &pl.s.Offers[sl.offer]
		if i := findAction(dst[start:], ActionLaunch, o.ID, sl.reason); i >= 0 {
			dst[start+i].Count++
			dst[start+i].CostPerHour += o.PricePerHour
			continue
		}
		dst = append(dst, Action{Kind: ActionLaunch, Workload: wpl.w.ID, Offer: o.ID,
			Count: 1, Reason: sl.reason, CostPerHour: o.PricePerHour})
	}
	for _, dr := range wpl.drains {
		r := &pl.s.Replicas[dr.replica]
		if i := findAction(dst[start:], ActionDrain, r.Offer, dr.reason); i >= 0 {
			a := &dst[start+i]
			a.Replicas = append(a.Replicas, r.ID)
			a.Count++
			a.CostPerHour -= pl.price(r.Offer)
			continue
		}
		dst = append(dst, Action{Kind: ActionDrain, Workload: wpl.w.ID, Offer: r.Offer, Count: 1,
			Replicas: []string{r.ID}, Reason: dr.reason, CostPerHour: -pl.price(r.Offer)})
	}
	dst = append(dst, wpl.approvals...)
	for i := start; i < len(dst); i++ {
		dst[i].ID = pl.actionID(&dst[i], i-start)
	}
	return dst
}

// findAction is the index of the action of that kind, offer and reason in out, or -1.
func findAction(out []Action, kind ActionKind, offer string, reason Reason) int {
	for i := range out {
		if out[i].Kind == kind && out[i].Offer == offer && out[i].Reason == reason {
			return i
		}
	}
	return -1
}

// actionID hashes what the action is and when it was planned, so a re-sent plan carries the same
// ids and a different plan different ones.
func (pl *Planner) actionID(a *Action, n int) string {
	h := fnv.New128a()
	var num [20]byte
	for _, s := range [...]string{pl.nowText(), a.Workload, string(a.Kind), a.Offer, string(a.Reason)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, v := range [...]uint64{uint64(a.Count), uint64(n)} {
		h.Write(strconv.AppendUint(num[:0], v, 10))
		h.Write([]byte{0})
	}
	h.Write(strconv.AppendUint(num[:0], pl.s.Seed, 16))
	h.Write([]byte{0})
	for _, r := range a.Replicas {
		h.Write([]byte(r))
		h.Write([]byte{0})
	}
	var sum [16]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// nowText is the planning time as action ids hash it, formatted once per time.
func (pl *Planner) nowText() string {
	if !pl.nowAt.Equal(pl.now) || pl.nowStr == "" {
		pl.nowAt, pl.nowStr = pl.now, pl.now.UTC().Format(time.RFC3339Nano)
	}
	return pl.nowStr
}
