package serving

import (
	"math"
	"sort"
)

// lagrangeIterations is how many subgradient steps the LP bound takes; any step's value is a
// valid bound, more steps only tighten it.
const lagrangeIterations = 300

// coverBound is the per-tick integer cover without start-up cost: Σ_t the cheapest integer counts
// covering need[t] within upper[t] (the LP value at a tick whose search did not finish). Dropping
// start-up cost and the link between ticks only relaxes the program, so it is a lower bound.
func (p *problem) coverBound() float64 {
	sum := 0.0
	for t, need := range p.need {
		if need <= 0 {
			continue
		}
		_, cost, fractional, exact := cheapestCover(p.price, p.rate, p.upper[t], need)
		if exact {
			sum += cost
		} else {
			sum += fractional
		}
	}
	return sum
}

// lagrangeBound is a lower bound on the LP relaxation of the program, hence on its optimum:
// coverage constraints are priced by multipliers λ_t ≥ 0, which leaves one problem per source,
//
//	g_i(λ) = min over 0 ≤ n(t) ≤ ub_i(t) of Σ_t (p_i − λ_t·rate_i)·n(t) + p_i·D·Σ_t (n(t) − n(t−1))^+,
//
// and L(λ) = Σ_t λ_t·need_t + Σ_i g_i(λ) ≤ LP optimum for every λ ≥ 0 (weak duality). g_i is
// solved exactly by layers (layered). ub_i(t) = min(rc_i(t), peak/rate_i): capping n_i there
// keeps every LP solution feasible and no dearer, so the cap does not change the LP optimum.
// The multipliers start at each tick's marginal price per token and follow projected
// subgradient steps (Polyak's rule toward the schedule's cost, target); the best L is kept.
// The per-source problems have integral optima (each is a shortest path), so the best bound
// this can reach is the LP relaxation itself.
//
// It returns the bound and the multipliers that gave it (prices per token per tick, which
// priced schedules to start from).
func (p *problem) lagrangeBound(target float64, iterations int) (float64, []float64) {
	ticks := len(p.need)
	ub := p.lpUpper()
	lambda := p.marginalPrices(ub)
	c := make([]float64, ticks)
	n := make([]float64, ticks)
	grad := make([]float64, ticks)
	best, theta, stall := math.Inf(-1), 1.0, 0
	bestLambda := append([]float64(nil), lambda...)
	for range iterations {
		value := 0.0
		for t := range ticks {
			value += lambda[t] * p.need[t]
			grad[t] = p.need[t]
		}
		for i := range p.price {
			for t := range ticks {
				c[t] = p.price[i] - lambda[t]*p.rate[i]
			}
			clear(n)
			value += layered(c, ub[i], p.price[i]*float64(p.d), n)
			for t := range ticks {
				grad[t] -= p.rate[i] * n[t]
			}
		}
		if value > best {
			best, stall = value, 0
			copy(bestLambda, lambda)
		} else if stall++; stall >= 15 {
			theta, stall = theta/2, 0
		}
		norm := 0.0
		for t := range ticks {
			if lambda[t] <= 0 && grad[t] < 0 {
				grad[t] = 0
			}
			norm += grad[t] * grad[t]
		}
		if norm == 0 || target <= value || theta < 1e-4 {
			break
		}
		step := theta * (target - value) / norm
		for t := range ticks {
			lambda[t] = math.Max(0, lambda[t]+step*grad[t])
		}
	}
	return best, bestLambda
}

// lpUpper is ub_i(t) per source: upper[t][i] capped at peak/rate_i.
func (p *problem) lpUpper() [][]float64 {
	ub := make([][]float64, len(p.price))
	for i := range p.price {
		ub[i] = make([]float64, len(p.need))
		for t := range p.need {
			if p.rate[i] > 0 {
				ub[i][t] = math.Min(float64(p.upper[t][i]), p.peak/p.rate[i])
			}
		}
	}
	return ub
}

// marginalPrices is each tick's fractional cover's dual: the price per token of the last source
// the cheapest-first cover needs there (0 where nothing is needed).
func (p *problem) marginalPrices(ub [][]float64) []float64 {
	order := make([]int, 0, len(p.price))
	for i := range p.price {
		if p.rate[i] > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		return p.price[order[a]]/p.rate[order[a]] < p.price[order[b]]/p.rate[order[b]]
	})
	lambda := make([]float64, len(p.need))
	for t, need := range p.need {
		for _, i := range order {
			if need <= 0 {
				break
			}
			if ub[i][t] > 0 {
				lambda[t] = p.price[i] / p.rate[i]
				need -= ub[i][t] * p.rate[i]
			}
		}
	}
	return lambda
}

// layered solves min Σ_t c[t]·n(t) + start·Σ_t (n(t) − n(t−1))^+ over 0 ≤ n(t) ≤ ub[t], adds an
// optimal n into n and returns the minimum. Cut n into layers at ub's distinct values: between
// consecutive values v' < v the layer is on or off per tick, allowed only where ub ≥ v, and
// costs (v − v')·(Σ_on c + start·runs). Any n's cost is the sum of its layers' costs (the layers
// are nested), and the layers' optima, chosen alone, still sum to a valid n whose cost is at
// most their sum, so solving each layer alone is exact.
func layered(c, ub []float64, start float64, n []float64) float64 {
	levels := distinctPositive(ub)
	total, below := 0.0, 0.0
	on := make([]bool, len(c))
	for _, v := range levels {
		total += (v - below) * bestRuns(c, ub, v, start, on)
		for t, o := range on {
			if o {
				n[t] += v - below
			}
		}
		below = v
	}
	return total
}

// bestRuns picks the ticks (where ub ≥ level) minimising Σ c + start·runs, by a two-state
// shortest path, and marks them in on.
func bestRuns(c, ub []float64, level, start float64, on []bool) float64 {
	ticks := len(c)
	fromOn := make([]bool, 2*ticks) // [2t]: off at t came from on; [2t+1]: on at t came from on
	off, run := 0.0, math.Inf(1)
	for t := range ticks {
		nextOff, nextRun := off, math.Inf(1)
		fromOn[2*t] = run < off
		if run < off {
			nextOff = run
		}
		if ub[t] >= level {
			fromOn[2*t+1] = run <= off+start
			nextRun = c[t] + math.Min(run, off+start)
		}
		off, run = nextOff, nextRun
	}
	state := run < off // true: on at the last tick
	value := math.Min(off, run)
	for t := ticks - 1; t >= 0; t-- {
		on[t] = state
		if state {
			state = fromOn[2*t+1]
		} else {
			state = fromOn[2*t]
		}
	}
	return value
}

func distinctPositive(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if x > 0 {
			out = append(out, x)
		}
	}
	sort.Float64s(out)
	k := 0
	for _, x := range out {
		if k == 0 || x > out[k-1] {
			out[k] = x
			k++
		}
	}
	return out[:k]
}
