package serving

import (
	"math"
	"slices"
	"testing"
)

// scripted holds what it is told, tick by tick, and checks that it never sees the current tick.
type scripted struct {
	t     *testing.T
	plan  [][]int
	ticks []int
}

func (p *scripted) Decide(obs *Observation) Decision {
	if len(obs.Demand) != obs.Tick || len(obs.Held) != obs.Tick || len(obs.Capacity) != obs.Tick {
		p.t.Fatalf("tick %d: the policy sees %d ticks of demand, %d of held, %d of capacity",
			obs.Tick, len(obs.Demand), len(obs.Held), len(obs.Capacity))
	}
	p.ticks = append(p.ticks, obs.Tick)
	return Decision{Held: slices.Clone(p.plan[obs.Tick])}
}

// handWindow: spot source A (H100, $6/h, capacity from a trace) and on-demand B (A100, $12/h),
// both 10 tok/s per replica of 8 GPUs, cold start 2 ticks.
func handWindow() *Window {
	caps := []int{1, 2, 2, 1, 2, 2}
	w := &Window{
		Sources: []Source{
			{Type: "H100-80GB", Zone: "z1", Spot: true, USDPerHour: 6, Rate: 10, GPUs: 8},
			{Type: "A100-80GB", Zone: "z2", USDPerHour: 12, Rate: 10, GPUs: 8},
		},
		Demand:    []float64{10, 10, 15, 20, 20, 5},
		ColdStart: 2,
	}
	for _, c := range caps {
		w.Capacity = append(w.Capacity, []int{c, Unlimited})
	}
	return w
}

// TestSimulateByHand follows docs/serving.md's rules on a case worked out on paper:
//
//	t0: A wants 2, capacity 1: one launch gets nothing.     A=[0]
//	t1: A wants 2 (launch at 1), B launches one.            A=[0,1] B=[1]
//	t2: A's first is ready (2-0 >= 2); B's is not yet.      ready A1 B0
//	t3: capacity drops to 1: the newest (launched at 1) goes, a tick before it would be ready.
//	t4: A relaunches (at 4); B ready.                       ready A1 B1
//	t5: B released; A's relaunch not ready yet.             ready A1
func TestSimulateByHand(t *testing.T) {
	w := handWindow()
	p := &scripted{t: t, plan: [][]int{{2, 0}, {2, 1}, {2, 1}, {2, 1}, {2, 1}, {2, 0}}}
	s, err := Simulate(p, w)
	if err != nil {
		t.Fatal(err)
	}
	col := func(m [][]int, i int) []int {
		out := make([]int, len(m))
		for t := range m {
			out[t] = m[t][i]
		}
		return out
	}
	for _, c := range []struct {
		name      string
		got, want []int
	}{
		{"held A", col(s.Held, 0), []int{1, 2, 2, 1, 2, 2}},
		{"ready A", col(s.Ready, 0), []int{0, 0, 1, 1, 1, 1}},
		{"held B", col(s.Held, 1), []int{0, 1, 1, 1, 1, 0}},
		{"ready B", col(s.Ready, 1), []int{0, 0, 0, 1, 1, 0}},
		{"launched A", col(s.Launched, 0), []int{1, 1, 0, 0, 1, 0}},
		{"launched B", col(s.Launched, 1), []int{0, 1, 0, 0, 0, 0}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	// Scored ticks 2..5: ready capacity 10, 20, 20, 10 against demand 15, 20, 20, 5.
	sc := Measure(w, s)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("availability %", sc.CapacityAvailabilityPct, 75)    // t2 short
	near("unserved %", sc.UnservedTokensPct, 100*5*60/3600.0) // 5 tok/s short for a minute
	near("cost $", sc.CostUSD, (24+18+24+12)/60.0)            // launching replicas billed
	near("served Mtok", sc.ServedMillionTokens, 3300/1e6)     // (10+20+20+5) × 60
	near("$/Mtok", sc.CostUSDPerMillionTokens, 1.3/0.0033)
	near("spot share %", sc.SpotSharePct, 70) // 7 of 10 replica-ticks
	near("moves/h", sc.MovesPerHour, 15)      // one start in 4 minutes
	near("H100 GPU-h", sc.GPUHoursByType["H100-80GB"], 7*8/60.0)
	near("A100 GPU-h", sc.GPUHoursByType["A100-80GB"], 3*8/60.0)
}

func TestSimulateRefusesBadDecisions(t *testing.T) {
	for _, plan := range [][]int{{1}, {-1, 0}} {
		w := handWindow()
		p := &scripted{t: t, plan: slices.Repeat([][]int{plan}, len(w.Demand))}
		if _, err := Simulate(p, w); err == nil {
			t.Errorf("decision %v: want an error", plan)
		}
	}
	w := handWindow()
	w.Capacity = w.Capacity[:3]
	if _, err := Simulate(&scripted{t: t}, w); err == nil {
		t.Error("capacity shorter than demand: want an error")
	}
}
