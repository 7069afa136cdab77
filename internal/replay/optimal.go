package replay

import (
	"fmt"
	"math"
)

func init() {
	register("optimal", newOptimal, true)
}

// optimalPlan replays a schedule computed in hindsight for the whole window.
type optimalPlan struct {
	held [][]int
	od   []int
}

func newOptimal(env Env) (Policy, error) {
	if len(env.Capacity) != env.Rules.Window {
		return nil, fmt.Errorf("optimal needs the window's %d ticks of capacity, got %d", env.Rules.Window, len(env.Capacity))
	}
	ready, _ := solveOptimal(env.Capacity, env.Rules)
	held, od := holdingsFor(ready, env.Rules)
	return &optimalPlan{held: held, od: od}, nil
}

func (p *optimalPlan) Decide(obs *Observation) Decision {
	return Decision{Spot: append([]int(nil), p.held[obs.Tick]...), OnDemand: p.od[obs.Tick]}
}

// solveOptimal finds the cheapest schedule that keeps Target replicas ready at every tick D..T-1,
// knowing the window's capacity in advance, and returns its ready counts ready[t][i] (sources i:
// the zones, then on-demand last; rows t < D are zero) and its cost over the whole window.
//
// It is an exact dynamic program over ready counts, not a heuristic. Why it is exact, with N the
// target, D the cold start, p_i a source's price and rc_i(t) = min of cap_i over t-D..t:
//
//  1. Counts carry no identity: a schedule is h_i(s) per source, ready r_i(t) = min h_i(t-D..t).
//     Cut each h_i into layers (layer k held at s iff h_i(s) >= k); each maximal run [u,v] of a
//     layer is a lifetime costing v-u+1 and ready on [u+D,v], and r_i(t) counts the lifetimes
//     ready at t. Any set of lifetimes is a valid schedule (counts <= cap), ready at least that.
//  2. An optimal schedule has exactly N ready at every tick: at the earliest tick with more, some
//     lifetime's ready interval starts there; dropping its first held tick keeps >= N ready and is
//     strictly cheaper. So an optimum is a sequence of ready vectors n(t) with Σ_i n_i(t) = N and
//     n_i(t) <= rc_i(t) (a ready lifetime was held through t-D..t), each n_i <= N: the N+E cap per
//     source never binds.
//  3. Cost of such a sequence: every lifetime pays its ready ticks plus D warm-up ticks, and at
//     least Σ_t (n_i(t) - n_i(t-1))^+ lifetimes start, so the optimum costs at least
//     C(n) = Σ_t Σ_i p_i (n_i(t) + D (n_i(t) - n_i(t-1))^+).
//  4. Conversely any n with those bounds is achieved for at most C(n) by holding
//     h_i(s) = max n_i(s..s+D): it is within capacity (n_i(t) <= rc_i(t) for every t it covers),
//     ready >= n, and costs Σ_s max n_i(s..s+D) <= C(n) (each layer's run costs its length + D).
//
// So min C over vectors summing to N is the optimum, and C is separable by tick with a state of
// one vector: a shortest path over C(N+Z, Z) states per tick (20 for three zones).
func solveOptimal(capacity [][]int, rules Rules) (ready [][]int, cost float64) {
	zones := len(capacity[0])
	states := compositions(rules.Target, zones+1)
	price := make([]float64, zones+1)
	for i := range zones {
		price[i] = 1
	}
	price[zones] = rules.ODRatio
	own := make([]float64, len(states))
	for s, n := range states {
		for i, c := range n {
			own[s] += price[i] * float64(c)
		}
	}
	d, window := rules.ColdStart, rules.Window
	warm := make([][]float64, len(states))
	for m := range states {
		warm[m] = make([]float64, len(states))
		for s := range states {
			warm[m][s] = float64(d) * warmUp(states[m], states[s], price)
		}
	}
	back := make([][]int32, window)
	value := make([]float64, len(states))
	next := make([]float64, len(states))
	for s := range states {
		value[s] = math.Inf(1)
		if fits(states[s], capacity, d, d) {
			value[s] = float64(d+1) * own[s]
		}
	}
	for t := d + 1; t < window; t++ {
		back[t] = make([]int32, len(states))
		for s, n := range states {
			next[s] = math.Inf(1)
			if !fits(n, capacity, d, t) {
				continue
			}
			for m := range states {
				c := value[m] + warm[m][s]
				if c < next[s] {
					next[s], back[t][s] = c, int32(m)
				}
			}
			next[s] += own[s]
		}
		value, next = next, value
	}
	best := argmin(value)
	cost = value[best]
	ready = make([][]int, window)
	for t := window - 1; t >= 0; t-- {
		ready[t] = make([]int, zones+1)
		if t < d {
			continue
		}
		copy(ready[t], states[best])
		if t > d {
			best = int(back[t][best])
		}
	}
	return ready, cost
}

func argmin(v []float64) int {
	best := 0
	for i := range v {
		if v[i] < v[best] {
			best = i
		}
	}
	return best
}

// fits says whether ready vector n is possible at tick t: each zone held its count through t-D..t.
func fits(n []int, capacity [][]int, d, t int) bool {
	for z := range len(n) - 1 {
		if n[z] == 0 {
			continue
		}
		for s := t - d; s <= t; s++ {
			if capacity[s][z] < n[z] {
				return false
			}
		}
	}
	return true
}

// warmUp is the price of the lifetimes that must start to go from ready vector m to n.
func warmUp(m, n []int, price []float64) float64 {
	c := 0.0
	for i := range n {
		if n[i] > m[i] {
			c += price[i] * float64(n[i]-m[i])
		}
	}
	return c
}

// holdingsFor turns ready counts into the cheapest holdings giving them: h_i(s) = max of
// ready_i over s..s+D. The last column is on-demand.
func holdingsFor(ready [][]int, rules Rules) (spot [][]int, od []int) {
	window, d := len(ready), rules.ColdStart
	zones := len(ready[0]) - 1
	spot = make([][]int, window)
	od = make([]int, window)
	for s := range window {
		spot[s] = make([]int, zones)
		for t := s; t <= min(s+d, window-1); t++ {
			for z := range zones {
				spot[s][z] = max(spot[s][z], ready[t][z])
			}
			od[s] = max(od[s], ready[t][zones])
		}
	}
	return spot, od
}

// compositions lists every vector of k non-negative counts summing to n, in a fixed order.
func compositions(n, k int) [][]int {
	if k == 1 {
		return [][]int{{n}}
	}
	var out [][]int
	for first := n; first >= 0; first-- {
		for _, rest := range compositions(n-first, k-1) {
			out = append(out, append([]int{first}, rest...))
		}
	}
	return out
}
