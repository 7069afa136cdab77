package serving

import "sort"

// schedule builds a feasible schedule, in ready counts, for windows too large for solveExact. It
// is a heuristic (an upper bound): each tick's cheapest integer cover, ignoring start-up cost,
// then improved until nothing changes by two moves that never raise the held cost:
//   - close: take as ready whatever the holdings h_i(s) = max n_i(s..s+D) have ready anyway
//     (a gap no longer than D in a layer is held through, so it is free capacity);
//   - prune: dearest per token first, drop the replicas whose capacity no tick needs, where
//     dropping them lowers the holdings' cost.
func (p *problem) schedule() [][]int {
	n := make([][]int, len(p.need))
	for t := range p.need {
		n[t] = make([]int, len(p.price))
	}
	p.fill(n)
	return p.improve(n)
}

// pricedSchedule starts instead from each source's own best schedule at running costs cost[i][t]
// (a Lagrangian's per-source problems, in whole replicas), which weigh start-up cost against how
// long a replica will be useful; fill then covers what they leave short.
func (p *problem) pricedSchedule(cost [][]float64) [][]int {
	ticks := len(p.need)
	n := make([][]int, ticks)
	for t := range n {
		n[t] = make([]int, len(p.price))
	}
	ub := make([]float64, ticks)
	got := make([]float64, ticks)
	for i := range p.price {
		for t := range ticks {
			ub[t] = float64(p.upper[t][i])
		}
		clear(got)
		layered(cost[i], ub, p.price[i]*float64(p.d), got)
		for t := range ticks {
			n[t][i] = int(got[t] + 0.5)
		}
	}
	p.fill(n)
	return p.improve(n)
}

// tokenCosts are the per-source running costs at prices per token lambda: p_i − λ_t·rate_i.
func (p *problem) tokenCosts(lambda []float64) [][]float64 {
	cost := make([][]float64, len(p.price))
	for i := range cost {
		cost[i] = make([]float64, len(lambda))
		for t, l := range lambda {
			cost[i][t] = p.price[i] - l*p.rate[i]
		}
	}
	return cost
}

// fill adds to n, at each tick short of its need, the cheapest integer cover of the shortfall.
func (p *problem) fill(n [][]int) {
	left := make([]int, len(p.price))
	for t, need := range p.need {
		for i, k := range n[t] {
			need -= p.rate[i] * float64(k)
			left[i] = p.upper[t][i] - k
		}
		if covers(0, need) {
			continue
		}
		counts, _, _, _ := cheapestCover(p.price, p.rate, left, need)
		for i, k := range counts {
			n[t][i] += k
		}
	}
}

// improve closes and prunes n until its held cost stops falling.
func (p *problem) improve(n [][]int) [][]int {
	for range 20 {
		before := p.heldCost(holdings(n, p.d))
		n = p.close(n)
		p.prune(n)
		if p.heldCost(holdings(n, p.d)) >= before {
			break
		}
	}
	return p.close(n)
}

// close is the ready counts of n's holdings, which are at least n and cost the same.
func (p *problem) close(n [][]int) [][]int {
	return readyOf(holdings(n, p.d), p.d)
}

// prune lowers n in place, source by source (dearest per token first), over every maximal
// stretch of ticks where the source has a replica and the tick has a replica's worth of spare
// capacity, keeping the change where it lowers that source's held cost.
func (p *problem) prune(n [][]int) {
	spare := make([]float64, len(n))
	for t := range n {
		spare[t] = -p.need[t]
		for i, k := range n[t] {
			spare[t] += p.rate[i] * float64(k)
		}
	}
	for _, i := range p.dearestFirst() {
		for p.pruneSource(n, spare, i) {
		}
	}
}

func (p *problem) pruneSource(n [][]int, spare []float64, i int) bool {
	cut := false
	for a := 0; a < len(n); a++ {
		if !p.canDrop(n, spare, a, i) {
			continue
		}
		b := a
		for b+1 < len(n) && p.canDrop(n, spare, b+1, i) {
			b++
		}
		before := sourceHeld(n, i, p.d)
		for t := a; t <= b; t++ {
			n[t][i]--
		}
		if sourceHeld(n, i, p.d) < before {
			for t := a; t <= b; t++ {
				spare[t] -= p.rate[i]
			}
			cut = true
		} else {
			for t := a; t <= b; t++ {
				n[t][i]++
			}
		}
		a = b
	}
	return cut
}

func (p *problem) canDrop(n [][]int, spare []float64, t, i int) bool {
	return n[t][i] > 0 && covers(spare[t]-p.rate[i], 0)
}

// sourceHeld is Σ_s max n_i(s..s+D): replicas of source i its holdings pay for.
func sourceHeld(n [][]int, i, d int) int {
	sum := 0
	for s := range n {
		h := 0
		for t := s; t <= min(s+d, len(n)-1); t++ {
			h = max(h, n[t][i])
		}
		sum += h
	}
	return sum
}

func (p *problem) dearestFirst() []int {
	var order []int
	for i := range p.price {
		if p.rate[i] > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		return p.price[order[a]]/p.rate[order[a]] > p.price[order[b]]/p.rate[order[b]]
	})
	return order
}
