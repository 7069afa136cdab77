package serving

import (
	"math"
	"sort"
)

// Mélange's allocation (Griggs et al., "Mélange: Cost Efficient Large Language Model Serving by
// Exploiting GPU Heterogeneity", arXiv 2404.14527; solver in tyler-griggs/melange-release,
// melange/solver.py, MelangeSolver.run). Its integer program, as that solver states it:
//   - each request-size bucket's rate is cut into slice_factor equal slices;
//   - each slice goes whole to one GPU type (binary x[slice][type], each row sums to 1);
//   - a slice of rate r on type k adds r / tput[bucket][k] to that type's load (util.py's
//     tputs_to_loads_2d: load = 1 / max throughput);
//   - a type's load must fit in its integer replica count n_k, and Σ_k cost_k · n_k is minimised.
//
// The README finds 4 slices per bucket enough for most cases; we take that.
const (
	MelangeSlices = 4
	// MelangePeriod is how often, in ticks, the allocation is re-solved (SERVING.md: every 10
	// minutes, on the last 10 minutes' demand).
	MelangePeriod = 10
)

// Melange is SERVING.md's `melange` peer: on-demand only, one source per GPU type (the cheapest
// on-demand location of that type), re-solved every MelangePeriod ticks and applied at once.
//
// Rules where SERVING.md and the paper are silent (the simplest ones):
//   - The demand the program is given is the mean of the last MelangePeriod ticks' demand (fewer
//     at the start of the window): Mélange sizes for "the service's overall request rate", a
//     mean rate, and adds no headroom of its own.
//   - Nothing is seen at tick 0, so it holds nothing then; the first solve is at tick 1, on tick
//     0's demand, and the next ones every MelangePeriod ticks after it (11, 21, ...).
//   - Sources carry one rate each (the profile's rate for the trace's size mix), so there is one
//     size bucket; SolveMelange itself takes any number.
type Melange struct {
	sources []int // the chosen source per GPU type, Window.Sources order
	price   []float64
	tput    [][]float64 // tput[0][k]: one bucket, the trace's mix
	held    []int       // current decision over all sources
}

var _ Policy = (*Melange)(nil)

// NewMelange builds the policy over a window's sources; it needs nothing else in advance.
func NewMelange(sources []Source) *Melange {
	cheapest := map[string]int{}
	var types []string
	for i, s := range sources {
		if s.Spot || s.Rate <= 0 {
			continue
		}
		j, seen := cheapest[s.Type]
		if !seen {
			types = append(types, s.Type)
		}
		if !seen || s.USDPerHour < sources[j].USDPerHour {
			cheapest[s.Type] = i
		}
	}
	sort.Strings(types)
	m := &Melange{held: make([]int, len(sources)), tput: [][]float64{nil}}
	for _, ty := range types {
		i := cheapest[ty]
		m.sources = append(m.sources, i)
		m.price = append(m.price, sources[i].USDPerHour)
		m.tput[0] = append(m.tput[0], sources[i].Rate)
	}
	return m
}

// Decide re-solves on the due ticks and otherwise keeps the last allocation.
func (m *Melange) Decide(obs *Observation) Decision {
	if obs.Tick >= 1 && (obs.Tick-1)%MelangePeriod == 0 {
		m.resolve(obs)
	}
	return Decision{Held: append([]int(nil), m.held...)}
}

func (m *Melange) resolve(obs *Observation) {
	from := max(0, obs.Tick-MelangePeriod)
	seen := obs.Demand[from:obs.Tick]
	sum := 0.0
	for _, d := range seen {
		sum += d
	}
	counts, ok := SolveMelange([]float64{sum / float64(len(seen))}, m.tput, m.price, MelangeSlices)
	clear(m.held)
	if !ok {
		return
	}
	for k, i := range m.sources {
		m.held[i] = counts[k]
	}
}

// SolveMelange solves Mélange's integer program exactly: rate[b] is bucket b's demand,
// tput[b][k] what one replica of type k serves of bucket b alone (0: cannot serve it), price[k]
// a replica's price. It returns the replica count per type, or false where some bucket with
// demand has no type that serves it.
//
// Slices of one bucket are interchangeable, so a solution is, per bucket, how many of its slices
// each type takes; the search is a depth-first branch and bound over those compositions, bucket
// by bucket, pruned by a bound that no completion can beat: the replicas already needed,
// Σ_k price_k · ceil(load_k), and the fractional cost, Σ_k price_k · load_k plus each remaining
// bucket's rate at its cheapest price per unit of load. The bound is exact (never above the
// optimum), so the result is the optimum; the search is exponential in buckets only.
func SolveMelange(rate []float64, tput [][]float64, price []float64, slices int) ([]int, bool) {
	s := melangeSearch{rate: rate, tput: tput, price: price, slices: slices, best: math.Inf(1)}
	s.rest = make([]float64, len(rate)+1)
	for b := len(rate) - 1; b >= 0; b-- {
		cheapest := math.Inf(1)
		for k := range price {
			if tput[b][k] > 0 {
				cheapest = min(cheapest, price[k]/tput[b][k])
			}
		}
		if rate[b] <= 0 {
			cheapest = 0
		}
		if math.IsInf(cheapest, 1) {
			return nil, false
		}
		s.rest[b] = s.rest[b+1] + rate[b]*cheapest
	}
	s.walk(0, make([]float64, len(price)))
	return s.bestN, s.bestN != nil
}

type melangeSearch struct {
	rate   []float64
	tput   [][]float64
	price  []float64
	slices int
	rest   []float64 // rest[b]: fractional cost of buckets b.. at their cheapest type
	best   float64
	bestN  []int
}

func (s *melangeSearch) walk(b int, load []float64) {
	whole, frac := 0.0, 0.0
	for k, l := range load {
		whole += s.price[k] * replicasFor(l)
		frac += s.price[k] * l
	}
	if max(whole, frac+s.rest[b]) >= s.best {
		return
	}
	if b == len(s.rate) {
		s.best = whole
		s.bestN = make([]int, len(load))
		for k, l := range load {
			s.bestN[k] = int(replicasFor(l))
		}
		return
	}
	s.place(b, 0, s.slices, load)
}

// place gives slices of bucket b (left of them) to types k.. in every way, then moves on.
func (s *melangeSearch) place(b, k, left int, load []float64) {
	if left == 0 || s.rate[b] <= 0 {
		s.walk(b+1, load)
		return
	}
	if k == len(s.price) {
		return
	}
	per := s.rate[b] / float64(s.slices)
	for take := left; take >= 0; take-- {
		if take > 0 && s.tput[b][k] <= 0 {
			continue
		}
		add := 0.0
		if take > 0 {
			add = float64(take) * per / s.tput[b][k]
		}
		load[k] += add
		s.place(b, k+1, left-take, load)
		load[k] -= add
	}
}

// replicasFor is the replicas a load needs, forgiving the rounding of a sum of slices.
func replicasFor(load float64) float64 {
	return math.Max(0, math.Ceil(load-1e-9))
}
