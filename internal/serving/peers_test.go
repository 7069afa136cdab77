package serving

import (
	"slices"
	"testing"
)

// column is source i's count at every tick.
func column(m [][]int, i int) []int {
	out := make([]int, len(m))
	for t := range m {
		out[t] = m[t][i]
	}
	return out
}

// fill is n ticks of v.
func fill(n int, v float64) []float64 { return slices.Repeat([]float64{v}, n) }

// TestODAutoscaleByHand: od-autoscale holds on-demand on the source cheapest per token (A: $6 for
// 100 tok/s beats B: $4 for 50, though B is cheaper per replica; spot C is never used), and moves
// its target by SkyServe's hysteresis, worked out tick by tick:
//
//	t0      no rate yet: nothing
//	t1      ceil(250/100) = 3 at once (no replica yet: SkyServe's fast path)
//	t11-20  80 tok/s wants 1: the downscale counter reaches 10
//	t21     250 again wants 3 = target: both counters reset
//	t22-41  80 wants 1 for 20 ticks (1,200 s): target 1 at t41
//	t61-65  420 wants 5 for 5 ticks (300 s): target 5 at t65
func TestODAutoscaleByHand(t *testing.T) {
	demand := slices.Concat(fill(10, 250), fill(10, 80), fill(1, 250), fill(39, 80), fill(10, 420))
	w := &Window{
		Sources: []Source{
			{Type: "H100-80GB", Zone: "a", USDPerHour: 6, Rate: 100, GPUs: 8},
			{Type: "A100-80GB", Zone: "b", USDPerHour: 4, Rate: 50, GPUs: 8},
			{Type: "H100-80GB", Zone: "c", Spot: true, USDPerHour: 1, Rate: 100, GPUs: 8},
		},
		Demand:    demand,
		ColdStart: 5,
	}
	for range demand {
		w.Capacity = append(w.Capacity, []int{Unlimited, Unlimited, 10})
	}
	p, err := registry["od-autoscale"].factory(Env{Sources: w.Sources, ColdStart: w.ColdStart})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Simulate(p, w)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Concat([]int{0}, slices.Repeat([]int{3}, 40), slices.Repeat([]int{1}, 24), slices.Repeat([]int{5}, 5))
	if got := column(s.Held, 0); !slices.Equal(got, want) {
		t.Errorf("held on A:\n got %v\nwant %v", got, want)
	}
	if got := column(s.Held, 1); slices.Max(got) != 0 {
		t.Errorf("held on B (dearer per token) = %v, want none", got)
	}
	if got := column(s.Held, 2); slices.Max(got) != 0 {
		t.Errorf("held on spot C = %v, want none", got)
	}
}

// TestSkyServeByHand: four spot zones of one type (z1 $2 < z2 $3 < z3 $4 < z4 $5 an hour, 100
// tok/s each), its on-demand at $10, demand 150 tok/s (target 2), cold start 2. Worked out:
//
//	t1  target 2: launch in the cheapest empty active zones z1, z2; z2 has no capacity; 2 on-demand
//	t2  z2 failed: preemptive; relaunch in z3 (cheapest empty active zone); still 2 on-demand
//	t3  z1, z3 active; z1's replica ready at t3, so 1 on-demand from t4
//	t5  z3 ready too (at t4): on-demand 0; z1's capacity drops to 0 and takes its replica
//	t6  z1 preemptive; relaunch in z4; 1 on-demand (1 spot ready) until z4 is ready at t8
func TestSkyServeByHand(t *testing.T) {
	const T = 10
	w := &Window{Demand: fill(T, 150), ColdStart: 2}
	for i, price := range []float64{2, 3, 4, 5} {
		w.Sources = append(w.Sources, Source{Type: "H100-80GB", Zone: "z" + string(rune('1'+i)), Spot: true, USDPerHour: price, Rate: 100, GPUs: 8})
	}
	w.Sources = append(w.Sources,
		Source{Type: "H100-80GB", Zone: "od", USDPerHour: 10, Rate: 100, GPUs: 8},
		Source{Type: "A100-80GB", Zone: "od", USDPerHour: 1, Rate: 20, GPUs: 8}, // cheaper, another type: not SkyServe's
	)
	for tick := range T {
		z1, z2 := 1, 0
		if tick >= 5 {
			z1 = 0
		}
		if tick >= 4 {
			z2 = 2
		}
		w.Capacity = append(w.Capacity, []int{z1, z2, 2, 2, Unlimited, Unlimited})
	}
	p, err := newSkyServe(Env{Sources: w.Sources, ColdStart: w.ColdStart})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Simulate(p, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]int{
		{0, 1, 1, 1, 1, 0, 0, 0, 0, 0}, // z1
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // z2: preemptive since t2, never revived
		{0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, // z3
		{0, 0, 0, 0, 0, 0, 1, 1, 1, 1}, // z4
		{0, 2, 2, 2, 1, 0, 1, 1, 1, 0}, // on-demand H100
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // on-demand A100
	} {
		if got := column(s.Held, i); !slices.Equal(got, want) {
			t.Errorf("%s %s held %v, want %v", w.Sources[i].Zone, w.Sources[i].Type, got, want)
		}
	}
	// Scored ticks 2..9: short at t2 (on-demand still starting), t5 (z1 reclaimed, on-demand
	// dropped a tick before), t6 and t7 (the new on-demand replica starting): 4 of 8 ticks.
	if sc := Measure(w, s); sc.CapacityAvailabilityPct != 50 {
		t.Errorf("availability %v%%, want 4 of 8 scored ticks", sc.CapacityAvailabilityPct)
	}
}

// TestSkyServeScalesDownLaunchingFirst: when the target falls, spot replicas still launching go
// before ready ones, and the dearest zone's first.
func TestSkyServeScalesDownLaunchingFirst(t *testing.T) {
	p := &skyServe{zones: []int{0, 1, 2}, price: []float64{2, 3, 4}}
	spot, ready := []int{2, 1, 1}, []int{1, 1, 0}
	p.scaleDown(spot, ready, 3)
	if want := []int{1, 0, 0}; !slices.Equal(spot, want) {
		t.Errorf("after scaling down 3: %v, want %v", spot, want)
	}
}

// TestSkyServeRevivesZones: with four zones all come back once at most min(1, 4-3) = 1 is
// active; with three, only once none is (REPLAY.md's rule).
func TestSkyServeRevivesZones(t *testing.T) {
	for _, tc := range []struct {
		name       string
		preemptive []bool
		want       []bool
	}{
		{"4 zones, 2 active", []bool{true, true, false, false}, []bool{true, true, false, false}},
		{"4 zones, 1 active", []bool{true, true, true, false}, []bool{false, false, false, false}},
		{"3 zones, 1 active", []bool{true, true, false}, []bool{true, true, false}},
		{"3 zones, none active", []bool{true, true, true}, []bool{false, false, false}},
	} {
		p := &skyServe{zones: make([]int, len(tc.preemptive)), preemptive: slices.Clone(tc.preemptive)}
		p.reviveIfFew()
		if !slices.Equal(p.preemptive, tc.want) {
			t.Errorf("%s: preemptive %v, want %v", tc.name, p.preemptive, tc.want)
		}
	}
}
