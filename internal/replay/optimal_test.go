package replay

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestOptimalHandWorked: one zone with capacity 1 except none at tick 2, N=1, D=1, T=6.
// Spot cannot be ready at ticks 2 and 3 (it would need ticks 1..3 held), so on-demand is held at
// ticks 1..3 (9 units); spot covers tick 1 (held 0,1: 2) and ticks 4,5 (held 3..5: 3). Window
// cost 14; the scored ticks 1..5 hold spot 1,0,1,1,1 and on-demand 1,1,1,0,0: 4 + 9 = 13 of 15.
func TestOptimalHandWorked(t *testing.T) {
	rules := Rules{Target: 1, Extra: 1, ColdStart: 1, Window: 6, ODRatio: 3}
	capacity := [][]int{{1}, {1}, {0}, {1}, {1}, {1}}
	_, cost := solveOptimal(capacity, rules)
	if cost != 14 {
		t.Errorf("optimal window cost = %v, want 14", cost)
	}
	got := evaluateOne(t, tinyTrace([]int{1, 1, 0, 1, 1, 1, 1}), rules, "optimal")
	if !near(got.AvailabilityPct, 100) || !near(got.CostPct, 100*13.0/15) {
		t.Errorf("optimal: %.2f%% available, %.2f%% cost; want 100%%, %.2f%%", got.AvailabilityPct, got.CostPct, 100*13.0/15)
	}
}

// TestOptimalMatchesBruteForce checks the dynamic program against an exhaustive search over every
// schedule (per source 0..N+E per tick, within capacity) on small random windows: same minimum
// window cost, and the schedule it builds is available at every tick and costs exactly that.
func TestOptimalMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 80 {
		rules := Rules{Target: 1 + rng.IntN(2), Extra: 1, ColdStart: 1 + rng.IntN(2), Window: 6, ODRatio: []float64{3, 2.5, 1.5}[rng.IntN(3)]}
		zones := 1 + rng.IntN(2)
		capacity := make([][]int, rules.Window)
		for t := range capacity {
			capacity[t] = make([]int, zones)
			for z := range capacity[t] {
				capacity[t][z] = []int{0, 1, 2, 3, 0, 2}[rng.IntN(6)]
			}
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ready, got := solveOptimal(capacity, rules)
			want := bruteForce(capacity, rules)
			if math.Abs(got-want) > 1e-9 {
				t.Fatalf("capacity %v, rules %+v: optimal = %v, brute force = %v", capacity, rules, got, want)
			}
			held, od := holdingsFor(ready, rules)
			s := Schedule{Held: held, OnDemand: od}
			for t2 := range held {
				for z := range held[t2] {
					if held[t2][z] > capacity[t2][z] {
						t.Fatalf("tick %d zone %d holds %d over capacity %d", t2, z, held[t2][z], capacity[t2][z])
					}
				}
			}
			sc := score(s, rules)
			if sc.AvailabilityPct != 100 || math.Abs(sc.WindowCost-want) > 1e-9 {
				t.Fatalf("built schedule: %.1f%% available, window cost %v; want 100%%, %v", sc.AvailabilityPct, sc.WindowCost, want)
			}
		})
	}
}

// bruteForce is the cheapest window cost over all schedules, by depth-first search that drops a
// branch as soon as a tick from D on is short of ready replicas or the cost passes the best.
func bruteForce(capacity [][]int, rules Rules) float64 {
	zones := len(capacity[0])
	held := make([][]int, len(capacity))
	od := make([]int, len(capacity))
	best := math.Inf(1)
	var walk func(t int, cost float64)
	walk = func(t int, cost float64) {
		if cost >= best {
			return
		}
		if t == rules.Window {
			best = cost
			return
		}
		choices := enumerate(zones+1, rules.Target+rules.Extra)
		for _, c := range choices {
			if !withinCapacity(c[:zones], capacity[t]) {
				continue
			}
			held[t], od[t] = c[:zones], c[zones]
			if t >= rules.ColdStart && readyTotal(held, od, t, rules.ColdStart) < rules.Target {
				continue
			}
			add := rules.ODRatio * float64(c[zones])
			for _, n := range c[:zones] {
				add += float64(n)
			}
			walk(t+1, cost+add)
		}
	}
	walk(0, 0)
	return best
}

func readyTotal(held [][]int, od []int, t, d int) int {
	r := readyAt(t, d, func(u int) int { return od[u] })
	for z := range held[t] {
		r += readyAt(t, d, func(u int) int { return held[u][z] })
	}
	return r
}

func withinCapacity(n, capacity []int) bool {
	for z := range n {
		if n[z] > capacity[z] {
			return false
		}
	}
	return true
}

// enumerate lists every vector of k counts each in 0..hi.
func enumerate(k, hi int) [][]int {
	if k == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, rest := range enumerate(k-1, hi) {
		for v := 0; v <= hi; v++ {
			out = append(out, append([]int{v}, rest...))
		}
	}
	return out
}
