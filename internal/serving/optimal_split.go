package serving

import "math"

// splitIterations is how many subgradient steps splitBound takes.
const splitIterations = 150

// splitBound is a Lagrangian decomposition bound, at least both others: copy the counts into
// per-tick covers m (integer, covering need[t]) and per-source schedules n (with start-up cost),
// ask m = n with multipliers μ_it, and give the covers the running cost:
//
//	L(μ) = Σ_t min_m Σ_i (p_i − μ_it)·m_i  +  Σ_i min_n Σ_t μ_it·n(t) + p_i·D·starts(n),
//
// a lower bound on the integer program for every μ (drop m = n and both sides only get cheaper).
// At μ = 0 it is coverBound; at μ_it = p_i − λ_t·rate_i it is at least lagrangeBound(λ), so it
// starts from there and follows projected-free subgradient steps n − m toward target.
//
// It returns the bound and the multipliers that gave it (the per-source running costs).
func (p *problem) splitBound(lambda []float64, target float64, iterations int) (float64, [][]float64) {
	ticks, sources := len(p.need), len(p.price)
	mu := p.tokenCosts(lambda)
	bestMu := p.tokenCosts(lambda)
	// The integer optimum must lie in both sides' sets, so the schedules get the integer upper
	// bound here, not lpUpper's fractional cap (which only the LP optimum respects).
	ub := make([][]float64, sources)
	for i := range ub {
		ub[i] = make([]float64, ticks)
		for t := range ticks {
			ub[i][t] = float64(p.upper[t][i])
		}
	}
	m := make([][]int, ticks)
	n := make([][]float64, sources)
	for i := range n {
		n[i] = make([]float64, ticks)
	}
	cost := make([]float64, sources)
	best, theta, stall := math.Inf(-1), 0.5, 0
	for range iterations {
		value := 0.0
		for t := range ticks {
			for i := range sources {
				cost[i] = p.price[i] - mu[i][t]
			}
			var v float64
			m[t], v = p.pricedCover(t, cost)
			value += v
		}
		for i := range sources {
			clear(n[i])
			value += layered(mu[i], ub[i], p.price[i]*float64(p.d), n[i])
		}
		if value > best {
			best, stall = value, 0
			for i := range mu {
				copy(bestMu[i], mu[i])
			}
		} else if stall++; stall >= 10 {
			theta, stall = theta/2, 0
		}
		norm := 0.0
		for i := range sources {
			for t := range ticks {
				g := n[i][t] - float64(m[t][i])
				norm += g * g
			}
		}
		if norm == 0 || target <= value || theta < 1e-4 {
			break
		}
		step := theta * (target - value) / norm
		for i := range sources {
			for t := range ticks {
				mu[i][t] += step * (n[i][t] - float64(m[t][i]))
			}
		}
	}
	return best, bestMu
}

// pricedCover is tick t's cheapest integer cover at costs cost_i, which may be negative (those
// sources are taken in full first). A search that does not finish gives its LP value instead,
// with the counts found so far.
func (p *problem) pricedCover(t int, cost []float64) ([]int, float64) {
	free := make([]int, len(cost))
	left := make([]int, len(cost))
	need, value := p.need[t], 0.0
	for i, c := range cost {
		left[i] = p.upper[t][i]
		if c <= 0 {
			free[i], left[i] = left[i], 0
			need -= p.rate[i] * float64(free[i])
			value += c * float64(free[i])
		}
	}
	if covers(0, need) {
		return free, value
	}
	counts, v, fractional, exact := cheapestCover(cost, p.rate, left, need)
	for i := range counts {
		counts[i] += free[i]
	}
	if !exact {
		v = fractional
	}
	return counts, value + v
}
