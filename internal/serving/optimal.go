package serving

import "math"

// Optimal is SERVING.md's `optimal`: the cheapest schedule, knowing the whole window's demand and
// capacity, that keeps ready capacity ≥ demand at every tick from ColdStart on (where capacity
// allows: a tick whose demand exceeds every source's capacity together is asked for all of it).
//
// The problem is internal/replay/optimal.go's, with tokens: its proof carries over unchanged
// (steps 1, 3 and 4; step 2, "exactly N ready", is replaced by the coverage constraint). With D the
// cold start, p_i a source's price per tick and rc_i(t) the least capacity of source i over
// t-D..t, the optimum is the least
//
//	C(n) = Σ_t Σ_i p_i (n_i(t) + D·(n_i(t) − n_i(t−1))^+)
//
// over ready counts n_i(t) ≤ rc_i(t), zero before D, with Σ_i rate_i·n_i(t) ≥ demand(t) from D on;
// holding h_i(s) = max n_i(s..s+D) achieves it. That is an integer program of ticks × sources
// variables (1,440 × 15–30 here).
//
// It is solved exactly by a dynamic program over ready vectors where those are few (small
// windows, tests). Otherwise Optimal holds the best of its heuristic schedules (an upper bound)
// and reports a lower bound: the largest of the LP relaxation's Lagrangian bound, the per-tick
// integer cover without start-up cost (optimal_bound.go) and a Lagrangian decomposition into
// both (optimal_split.go). Bound says whether it is the optimum or only a bound.
type Optimal struct {
	held  [][]int
	cost  float64
	bound float64
	exact bool
}

var _ Policy = (*Optimal)(nil)

// NewOptimal solves the window in hindsight and returns the policy that replays the schedule.
func NewOptimal(w Window) *Optimal {
	p := newProblem(w)
	if ready, value, ok := p.solveExact(); ok {
		held := holdings(ready, p.d)
		return &Optimal{held: held, cost: p.heldCost(held), bound: value, exact: true}
	}
	return p.solveBounded()
}

// solveBounded holds the cheapest of three heuristic schedules and bounds the optimum from
// below with the best of the three bounds (optimal_bound.go). Each Lagrangian's multipliers also
// price a schedule: they say what a replica is worth at each tick.
func (p *problem) solveBounded() *Optimal {
	o := &Optimal{cost: math.Inf(1)}
	o.consider(p, p.schedule())
	lower, lambda := p.lagrangeBound(o.cost, lagrangeIterations)
	o.consider(p, p.pricedSchedule(p.tokenCosts(lambda)))
	split, mu := p.splitBound(lambda, o.cost, splitIterations)
	o.consider(p, p.pricedSchedule(mu))
	o.bound = max(p.coverBound(), lower, split)
	// The schedule's cost and the bound may meet: the schedule is then proven optimal.
	o.exact = o.cost-o.bound <= 1e-9*math.Max(1, o.cost)
	if o.exact {
		o.bound = o.cost
	}
	return o
}

// consider keeps the schedule with ready counts ready where it costs less than the one held.
func (o *Optimal) consider(p *problem, ready [][]int) {
	held := holdings(ready, p.d)
	if cost := p.heldCost(held); cost < o.cost {
		o.held, o.cost = held, cost
	}
}

// Decide replays the schedule; past its end it holds nothing.
func (o *Optimal) Decide(obs *Observation) Decision {
	if obs.Tick < 0 || obs.Tick >= len(o.held) {
		return Decision{Held: make([]int, len(obs.Sources))}
	}
	return Decision{Held: append([]int(nil), o.held[obs.Tick]...)}
}

// Cost is what the schedule costs over the window in USD if no replica is reclaimed (an upper
// bound on the optimum).
func (o *Optimal) Cost() float64 { return o.cost }

// Bound is a lower bound on the optimum's cost in USD; exact says it is the optimum itself, which
// the schedule then reaches.
func (o *Optimal) Bound() (usd float64, exact bool) { return o.bound, o.exact }

// problem is one window's integer program in ready counts.
type problem struct {
	d     int
	price []float64 // USD per tick of one replica
	rate  []float64
	peak  float64 // the window's highest demand
	// upper[t][i] is the most replicas of source i that can be ready at tick t: its least
	// capacity over t-D..t, capped at what covering the peak on source i alone takes (more is
	// never cheaper: capping every n_i at it keeps coverage and lowers C); 0 before D.
	upper [][]int
	// need[t] is the demand to cover at tick t: 0 before D, else demand capped at what all
	// sources together can have ready.
	need []float64
}

func newProblem(w Window) *problem {
	ticks, sources := len(w.Demand), len(w.Sources)
	p := &problem{d: max(0, w.ColdStart), price: make([]float64, sources), rate: make([]float64, sources),
		upper: make([][]int, ticks), need: make([]float64, ticks)}
	for i, s := range w.Sources {
		p.price[i] = s.USDPerHour / 60
		p.rate[i] = s.Rate
	}
	for _, d := range w.Demand {
		p.peak = max(p.peak, d)
	}
	for t := range ticks {
		p.upper[t] = make([]int, sources)
		if t < p.d {
			continue
		}
		most := 0.0
		for i := range sources {
			p.upper[t][i] = p.readyLimit(w, t, i)
			most += p.rate[i] * float64(p.upper[t][i])
		}
		p.need[t] = math.Max(0, math.Min(w.Demand[t], most))
	}
	return p
}

func (p *problem) readyLimit(w Window, t, i int) int {
	if p.rate[i] <= 0 {
		return 0
	}
	limit := int(math.Ceil(p.peak / p.rate[i]))
	for s := t - p.d; s <= t; s++ {
		if c := capacityAt(w, s, i); c != Unlimited {
			limit = min(limit, c)
		}
	}
	return max(0, limit)
}

// capacityAt reads Window.Capacity; an entry it lacks is Unlimited for on-demand, none for spot.
func capacityAt(w Window, t, i int) int {
	if t < len(w.Capacity) && i < len(w.Capacity[t]) {
		return w.Capacity[t][i]
	}
	if w.Sources[i].Spot {
		return 0
	}
	return Unlimited
}

// covers says whether supply meets need, forgiving float rounding.
func covers(supply, need float64) bool {
	return supply >= need-1e-9*math.Max(1, need)
}

// cost is C(n), the proof's cost of ready counts n.
func (p *problem) cost(n [][]int) float64 {
	c := 0.0
	for t := range n {
		for i, k := range n[t] {
			prev := 0
			if t > 0 {
				prev = n[t-1][i]
			}
			c += p.price[i] * float64(k+p.d*max(0, k-prev))
		}
	}
	return c
}

// heldCost is what holdings cost: every held replica, launching included, every tick.
func (p *problem) heldCost(h [][]int) float64 {
	c := 0.0
	for _, row := range h {
		for i, k := range row {
			c += p.price[i] * float64(k)
		}
	}
	return c
}

// holdings are the proof's step 4: h_i(s) = max ready_i(s..s+D), the least holdings that have
// ready_i(t) replicas ready at every t.
func holdings(ready [][]int, d int) [][]int {
	h := make([][]int, len(ready))
	for s := range ready {
		h[s] = make([]int, len(ready[s]))
		for t := s; t <= min(s+d, len(ready)-1); t++ {
			for i, k := range ready[t] {
				h[s][i] = max(h[s][i], k)
			}
		}
	}
	return h
}

// readyOf is what holdings h have ready: min h_i(t-D..t), nothing before D.
func readyOf(h [][]int, d int) [][]int {
	r := make([][]int, len(h))
	for t := range h {
		r[t] = make([]int, len(h[t]))
		if t < d {
			continue
		}
		copy(r[t], h[t])
		for s := t - d; s < t; s++ {
			for i, k := range h[s] {
				r[t][i] = min(r[t][i], k)
			}
		}
	}
	return r
}
