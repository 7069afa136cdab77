package serving

import (
	"math"
	"sort"
)

// coverNodes caps one cover search; past it the best cover found so far is returned, marked
// inexact.
const coverNodes = 200_000

// cover is one tick's integer covering problem: the cheapest counts n_i ≤ upper_i with
// Σ_i rate_i·n_i ≥ need, ignoring start-up cost.
type cover struct {
	price, rate []float64
	order       []int // sources that can help, cheapest per token first
	upper       []int
	class       []int // per source, which rate it has (sources of one rate are interchangeable)
	short       []int // per class, how many chosen sources of it are below their upper
	best        float64
	bestN, n    []int
	nodes       int
}

// cheapestCover solves one tick's cover by branch and bound: sources cheapest per token first,
// counts tried from the most useful down, a branch dropped when its cost plus the fractional
// (LP) cost of the rest of the need reaches the best found. It returns the counts, their cost
// and whether the search finished (the counts are then optimal); fractional is the LP value,
// a lower bound either way.
func cheapestCover(price, rate []float64, upper []int, need float64) (n []int, cost, fractional float64, exact bool) {
	c := &cover{price: price, rate: rate, upper: upper, best: math.Inf(1), n: make([]int, len(price))}
	for i := range price {
		if upper[i] > 0 && rate[i] > 0 {
			c.order = append(c.order, i)
		}
	}
	sort.SliceStable(c.order, func(a, b int) bool {
		i, j := c.order[a], c.order[b]
		return price[i]/rate[i] < price[j]/rate[j]
	})
	c.classes()
	c.greedy(need)
	fractional = c.lpRest(0, need)
	c.walk(0, need, 0)
	return c.bestN, c.best, math.Min(fractional, c.best), c.nodes <= coverNodes
}

// greedy is the first incumbent: cheapest per token first, as many as still help.
func (c *cover) greedy(need float64) {
	n := make([]int, len(c.price))
	cost := 0.0
	for _, i := range c.order {
		if covers(0, need) {
			break
		}
		k := min(c.upper[i], int(math.Ceil(need/c.rate[i]-1e-9)))
		n[i] = k
		need -= float64(k) * c.rate[i]
		cost += float64(k) * c.price[i]
	}
	c.best, c.bestN = cost, n
}

// lpRest is the fractional cost of covering need with sources order[from:].
func (c *cover) lpRest(from int, need float64) float64 {
	cost := 0.0
	for _, i := range c.order[from:] {
		if need <= 0 {
			break
		}
		take := math.Min(float64(c.upper[i]), need/c.rate[i])
		cost += take * c.price[i]
		need -= take * c.rate[i]
	}
	if !covers(0, need) {
		return math.Inf(1)
	}
	return cost
}

func (c *cover) walk(k int, need, cost float64) {
	c.nodes++
	if c.nodes > coverNodes {
		return
	}
	if covers(0, need) {
		if cost < c.best {
			c.best, c.bestN = cost, append([]int(nil), c.n...)
		}
		return
	}
	if k == len(c.order) || cost+c.lpRest(k, need) >= c.best-1e-12 {
		return
	}
	i := c.order[k]
	most := min(c.upper[i], int(math.Ceil(need/c.rate[i]-1e-9)))
	if c.short[c.class[i]] > 0 {
		// A cheaper source of the same rate has room: a replica here would be better there.
		most = 0
	}
	for take := most; take >= 0; take-- {
		c.n[i] = take
		if take < c.upper[i] {
			c.short[c.class[i]]++
		}
		c.walk(k+1, need-float64(take)*c.rate[i], cost+float64(take)*c.price[i])
		if take < c.upper[i] {
			c.short[c.class[i]]--
		}
	}
	c.n[i] = 0
}

// classes groups sources by rate. Within a rate, order is by price, so a source is used only once
// every cheaper one of its rate is full (exchanging a replica between them keeps coverage).
func (c *cover) classes() {
	c.class = make([]int, len(c.price))
	index := map[float64]int{}
	for _, i := range c.order {
		k, ok := index[c.rate[i]]
		if !ok {
			k = len(index)
			index[c.rate[i]] = k
		}
		c.class[i] = k
	}
	c.short = make([]int, len(index))
}
