package serving

import "math"

// exactWork caps the exact dynamic program: states² × ticks transitions.
const exactWork = 40_000_000

// solveExact minimises C(n) by a shortest path over ready vectors, tick by tick, as
// internal/replay/optimal.go does: a state is n(t), a step from m to n costs
// Σ_i p_i (n_i + D·(n_i − m_i)^+), and n(t) must be within upper[t] and cover need[t]. It gives up
// (false) where the vectors are too many for exactWork.
func (p *problem) solveExact() (ready [][]int, value float64, ok bool) {
	ticks := len(p.need)
	if ticks == 0 {
		return nil, 0, true
	}
	top := make([]int, len(p.price))
	for _, row := range p.upper {
		for i, k := range row {
			top[i] = max(top[i], k)
		}
	}
	states := 1.0
	for _, k := range top {
		states *= float64(k + 1)
	}
	if states*states*float64(ticks) > exactWork {
		return nil, 0, false
	}
	vecs := vectorsUpTo(top)
	values, back := p.shortestPath(vecs)
	best := minIndex(values)
	value = values[best]
	if math.IsInf(value, 1) {
		return nil, 0, false
	}
	ready = make([][]int, ticks)
	for t := ticks - 1; t >= 0; t-- {
		ready[t] = append([]int(nil), vecs[best]...)
		best = back[t][best]
	}
	return ready, value, true
}

// shortestPath returns, per state, the least C of ready counts ending in it at the last tick, and
// for every tick the state each state came from.
func (p *problem) shortestPath(vecs [][]int) ([]float64, [][]int) {
	own := make([]float64, len(vecs))
	for s, n := range vecs {
		for i, k := range n {
			own[s] += p.price[i] * float64(k)
		}
	}
	zero := 0 // vectorsUpTo lists the zero vector first
	prev := make([]float64, len(vecs))
	for s := range prev {
		prev[s] = math.Inf(1)
	}
	prev[zero] = 0
	back := make([][]int, len(p.need))
	for t := range p.need {
		next := make([]float64, len(vecs))
		back[t] = make([]int, len(vecs))
		for s, n := range vecs {
			next[s] = math.Inf(1)
			if !p.feasible(t, n) {
				continue
			}
			for m, from := range vecs {
				if math.IsInf(prev[m], 1) {
					continue
				}
				c := prev[m] + p.startCost(from, n)
				if c < next[s] {
					next[s], back[t][s] = c, m
				}
			}
			next[s] += own[s]
		}
		prev = next
	}
	return prev, back
}

func (p *problem) feasible(t int, n []int) bool {
	supply := 0.0
	for i, k := range n {
		if k > p.upper[t][i] {
			return false
		}
		supply += p.rate[i] * float64(k)
	}
	return covers(supply, p.need[t])
}

// startCost is the warm-up the replicas started between ready vectors m and n are billed.
func (p *problem) startCost(m, n []int) float64 {
	c := 0.0
	for i := range n {
		if n[i] > m[i] {
			c += p.price[i] * float64(p.d*(n[i]-m[i]))
		}
	}
	return c
}

// vectorsUpTo lists every vector n with 0 ≤ n_i ≤ top_i, the zero vector first.
func vectorsUpTo(top []int) [][]int {
	out := [][]int{make([]int, len(top))}
	for i, k := range top {
		size := len(out)
		for c := 1; c <= k; c++ {
			for _, v := range out[:size] {
				w := append([]int(nil), v...)
				w[i] = c
				out = append(out, w)
			}
		}
	}
	return out
}

func minIndex(v []float64) int {
	best := 0
	for i := range v {
		if v[i] < v[best] {
			best = i
		}
	}
	return best
}
