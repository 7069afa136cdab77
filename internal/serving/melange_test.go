package serving

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSolveMelangeHandWorked: one bucket of 1,000 tok/s in 4 slices of 250; A100 serves 172 tok/s
// a replica, H100 829. With j slices on H100 it takes ceil(250j/829) H100 and ceil(250(4−j)/172)
// A100:
//
//	j:     0    1    2    3    4
//	H100:  0    1    1    1    2
//	A100:  6    5    3    2    0
//
// so at A100 $10 and H100 $35 the costs are 60, 85, 65, 55, 70: the mix (1 H100 + 2 A100, $55)
// beats either type alone; at H100 $45 they are 60, 95, 75, 65, 90 and six A100 win; at 800 tok/s
// (slices of 200, j=4: one H100 at 800/829) one H100 ($35) beats five A100 ($50) and any mix.
func TestSolveMelangeHandWorked(t *testing.T) {
	tput := [][]float64{{172, 829}}
	tests := []struct {
		name     string
		demand   float64
		price    []float64
		want     []int
		wantCost float64
	}{
		{name: "mix beats either type", demand: 1000, price: []float64{10, 35}, want: []int{2, 1}, wantCost: 55},
		{name: "A100 alone", demand: 1000, price: []float64{10, 45}, want: []int{6, 0}, wantCost: 60},
		{name: "H100 alone", demand: 800, price: []float64{10, 35}, want: []int{0, 1}, wantCost: 35},
		{name: "no demand", demand: 0, price: []float64{10, 35}, want: []int{0, 0}, wantCost: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := SolveMelange([]float64{tt.demand}, tput, tt.price, MelangeSlices)
			if !ok || !slices.Equal(got, tt.want) || priceOf(got, tt.price) != tt.wantCost {
				t.Errorf("SolveMelange = %v, %v; want %v ($%v)", got, ok, tt.want, tt.wantCost)
			}
		})
	}
}

// TestSolveMelangeBuckets: two buckets, one slice each. Type A ($1) serves 10 small or 1 large
// per replica, B ($3) 20 small or 8 large; demand is 10 small and 4 large. Small and large both
// on A load it 1 + 4 = 5 ($5); small on A, large on B: 1 A and 0.5 B ($4); small on B, large on A:
// 0.5 B and 4 A ($7); both on B: 0.5 + 0.5 = 1 B ($3), the optimum, where the loads of two
// buckets share one replica.
func TestSolveMelangeBuckets(t *testing.T) {
	got, ok := SolveMelange([]float64{10, 4}, [][]float64{{10, 20}, {1, 8}}, []float64{1, 3}, 1)
	if !ok || !slices.Equal(got, []int{0, 1}) {
		t.Errorf("SolveMelange = %v, %v; want [0 1]", got, ok)
	}
	if _, ok := SolveMelange([]float64{1}, [][]float64{{0, 0}}, []float64{1, 3}, 4); ok {
		t.Error("a bucket no type serves was solved")
	}
}

// TestSolveMelangeMatchesEnumeration checks the branch and bound against every assignment of
// every slice to a type, on small random programs.
func TestSolveMelangeMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		buckets, types, slices := 1+rng.IntN(2), 1+rng.IntN(3), 1+rng.IntN(3)
		rate := make([]float64, buckets)
		tput := make([][]float64, buckets)
		price := make([]float64, types)
		for k := range price {
			price[k] = float64(1 + rng.IntN(9))
		}
		for b := range rate {
			rate[b] = 50 * rng.Float64()
			tput[b] = make([]float64, types)
			for k := range tput[b] {
				tput[b][k] = float64(1 + rng.IntN(30))
			}
		}
		got, ok := SolveMelange(rate, tput, price, slices)
		want := enumerateMelange(rate, tput, price, slices)
		if !ok || math.Abs(priceOf(got, price)-want) > 1e-9 {
			t.Fatalf("rate %v tput %v price %v slices %d: got %v ($%v), enumeration $%v", rate, tput, price, slices, got, priceOf(got, price), want)
		}
	}
}

// enumerateMelange is the cheapest cost over all types^(buckets·slices) slice assignments.
func enumerateMelange(rate []float64, tput [][]float64, price []float64, slices int) float64 {
	cells := len(rate) * slices
	best := math.Inf(1)
	choice := make([]int, cells)
	for {
		load := make([]float64, len(price))
		for c, k := range choice {
			b := c / slices
			load[k] += rate[b] / float64(slices) / tput[b][k]
		}
		cost := 0.0
		for k, l := range load {
			cost += price[k] * replicasFor(l)
		}
		best = min(best, cost)
		c := 0
		for c < cells && choice[c] == len(price)-1 {
			choice[c] = 0
			c++
		}
		if c == cells {
			return best
		}
		choice[c]++
	}
}

func priceOf(n []int, price []float64) float64 {
	sum := 0.0
	for k, c := range n {
		sum += float64(c) * price[k]
	}
	return sum
}

// TestMelangePolicy: two A100 on-demand locations ($12, $10), an A100 spot source (never used)
// and one H100 on-demand ($35). Nothing is held at tick 0; tick 1 solves on tick 0's 1,000 tok/s
// (one H100 and two A100 in the $10 location, as TestSolveMelangeHandWorked) and keeps it to tick
// 10; tick 11 solves on the mean of ticks 1..10, 800 tok/s: one H100.
func TestMelangePolicy(t *testing.T) {
	sources := []Source{
		{Type: "A100", Zone: "x", USDPerHour: 12, Rate: 172},
		{Type: "A100", Zone: "y", USDPerHour: 10, Rate: 172},
		{Type: "A100", Zone: "y", Spot: true, USDPerHour: 3, Rate: 172},
		{Type: "H100", Zone: "x", USDPerHour: 35, Rate: 829},
	}
	demand := []float64{1000, 700, 900, 700, 900, 700, 900, 700, 900, 700, 900}
	m := NewMelange(sources)
	want := map[int][]int{0: {0, 0, 0, 0}, 1: {0, 2, 0, 1}, 10: {0, 2, 0, 1}, 11: {0, 0, 0, 1}}
	for tick := 0; tick <= 11; tick++ {
		got := m.Decide(&Observation{Tick: tick, Sources: sources, Demand: demand[:min(tick, len(demand))]})
		if w, ok := want[tick]; ok && !slices.Equal(got.Held, w) {
			t.Errorf("tick %d: held %v, want %v", tick, got.Held, w)
		}
	}
}
