package serving

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Prices below are per hour, chosen so a replica costs a round number per tick (60 → $1).
//
// "spot gap": D=1, 100 tok/s every tick; spot ($1/tick, 100 tok/s) has capacity 1 except at
// tick 2, so it can be ready at ticks 1 and 4 only (ready at t needs t−1..t held); on-demand
// ($3/tick) covers ticks 2 and 3. Spot at 1 costs 1 + 1 warm-up, on-demand 2..3 costs 6 + 3,
// spot at 4 costs 1 + 1: $13, held as spot at ticks 0,1,3,4 and on-demand at 1,2,3. Covering
// tick 1 by on-demand instead costs 14, on-demand throughout 15.
//
// "two small beat one large": D=1, 250 tok/s at ticks 1 and 2; A ($1, 172 tok/s) or H ($3, 829).
// Two A cost 2 a tick plus 2 warm-up: $6 (held 2 at ticks 0..2); one H costs $9.
//
// "short spot run": D=2, 100 tok/s; spot ($1) has capacity 1 except at tick 4, so it cannot be
// ready at 4..6; on-demand costs $2.50. Spot at 2..3 (2 + 2 warm-up) then on-demand 4..7
// (10 + 5) costs $19; on-demand throughout 20; restarting spot for tick 7 (1 + 2) instead of a
// fourth on-demand tick (2.5) 19.5.
func TestOptimalHandWorked(t *testing.T) {
	spot := Source{Type: "X", Zone: "z", Spot: true, USDPerHour: 60, Rate: 100}
	tests := []struct {
		name     string
		w        Window
		want     float64
		wantHeld [][]int
	}{
		{
			name: "spot gap",
			w: Window{Sources: []Source{spot, {Type: "X", USDPerHour: 180, Rate: 100}}, ColdStart: 1,
				Demand:   []float64{100, 100, 100, 100, 100},
				Capacity: [][]int{{1, -1}, {1, -1}, {0, -1}, {1, -1}, {1, -1}}},
			want:     13,
			wantHeld: [][]int{{1, 0}, {1, 1}, {0, 1}, {1, 1}, {1, 0}},
		},
		{
			name: "two small beat one large",
			w: Window{Sources: []Source{{Type: "A", USDPerHour: 60, Rate: 172}, {Type: "H", USDPerHour: 180, Rate: 829}}, ColdStart: 1,
				Demand:   []float64{0, 250, 250},
				Capacity: [][]int{{-1, -1}, {-1, -1}, {-1, -1}}},
			want:     6,
			wantHeld: [][]int{{2, 0}, {2, 0}, {2, 0}},
		},
		{
			name: "short spot run",
			w: Window{Sources: []Source{spot, {Type: "X", USDPerHour: 150, Rate: 100}}, ColdStart: 2,
				Demand:   []float64{100, 100, 100, 100, 100, 100, 100, 100},
				Capacity: [][]int{{1, -1}, {1, -1}, {1, -1}, {1, -1}, {0, -1}, {1, -1}, {1, -1}, {1, -1}}},
			want:     19,
			wantHeld: [][]int{{1, 0}, {1, 0}, {1, 1}, {1, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptimal(tt.w)
			if usd, exact := o.Bound(); !exact || !near(usd, tt.want) || !near(o.Cost(), tt.want) {
				t.Errorf("exact: cost %v, bound %v (exact %v); want %v, exact", o.Cost(), usd, exact, tt.want)
			}
			for tick, want := range tt.wantHeld {
				if got := o.Decide(&Observation{Tick: tick}).Held; !slices.Equal(got, want) {
					t.Errorf("tick %d: held %v, want %v", tick, got, want)
				}
			}
			// The path for large windows must reach the same optimum here and bound it.
			b := newProblem(tt.w).solveBounded()
			if usd, _ := b.Bound(); b.Cost() < tt.want-1e-9 || usd > tt.want+1e-9 {
				t.Errorf("bounded: cost %v, bound %v; want bound ≤ %v ≤ cost", b.Cost(), usd, tt.want)
			}
			if !near(b.Cost(), tt.want) {
				t.Errorf("bounded: schedule costs %v, want the optimum %v", b.Cost(), tt.want)
			}
		})
	}
}

// TestOptimalMatchesBruteForce checks, on tiny random windows, the exact program against a search
// over every holding schedule (the proof's claim that min C is the optimum, in tokens), and the
// bounded path's schedule and bounds against it.
func TestOptimalMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		w := randomWindow(rng, 2, 4+rng.IntN(2), 2, 2)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			o := NewOptimal(w)
			want := bruteForce(w, 2)
			usd, exact := o.Bound()
			if !exact || !near(usd, want) || !near(o.Cost(), want) {
				t.Fatalf("%+v: exact cost %v bound %v, brute force %v", w, o.Cost(), usd, want)
			}
			checkSchedule(t, w, o)
		})
	}
}

// TestOptimalBoundProperty: on random small windows, the bounded path's bounds never pass the
// exact optimum, its schedule never costs less, and it is feasible.
func TestOptimalBoundProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 150 {
		w := randomWindow(rng, 2+rng.IntN(2), 6+rng.IntN(20), 3, 4)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p := newProblem(w)
			_, opt, ok := p.solveExact()
			if !ok {
				t.Skip("too large for the exact program")
			}
			b := p.solveBounded()
			usd, _ := b.Bound()
			lagrange, _ := p.lagrangeBound(b.Cost(), lagrangeIterations)
			if usd > opt+1e-9 || lagrange > opt+1e-9 || p.coverBound() > opt+1e-9 || b.Cost() < opt-1e-9 {
				t.Fatalf("%+v: bound %v (lagrange %v, cover %v), schedule %v, optimum %v", w, usd, lagrange, p.coverBound(), b.Cost(), opt)
			}
			checkSchedule(t, w, b)
		})
	}
}

// checkSchedule replays o's holdings: within capacity every tick, and from ColdStart on ready
// capacity (a replica is ready at t when held through t−D..t) covers demand wherever all sources
// together could have covered it.
func checkSchedule(t *testing.T, w Window, o *Optimal) {
	t.Helper()
	held := make([][]int, len(w.Demand))
	for tick := range held {
		held[tick] = o.Decide(&Observation{Tick: tick, Sources: w.Sources}).Held
		for i, k := range held[tick] {
			if c := w.Capacity[tick][i]; c != Unlimited && k > c {
				t.Fatalf("tick %d source %d: holds %d over capacity %d", tick, i, k, c)
			}
		}
	}
	p := newProblem(w)
	ready := readyOf(held, w.ColdStart)
	for tick := w.ColdStart; tick < len(held); tick++ {
		supply, most := 0.0, 0.0
		for i, k := range ready[tick] {
			supply += w.Sources[i].Rate * float64(k)
			most += w.Sources[i].Rate * float64(p.upper[tick][i])
		}
		if !covers(supply, math.Min(w.Demand[tick], most)) {
			t.Fatalf("tick %d: ready %v serves %v of demand %v (at most %v possible)", tick, ready[tick], supply, w.Demand[tick], most)
		}
	}
}

// randomWindow has a spot source per zone (capacity 0..top) and one on-demand source, some of
// either type at random rates (50..200 tok/s) and prices, and demand of 0..steps × 50 tok/s.
func randomWindow(rng *rand.Rand, sources, ticks, top, steps int) Window {
	w := Window{ColdStart: rng.IntN(3)}
	for i := range sources {
		s := Source{Type: fmt.Sprint("T", rng.IntN(2)), Zone: fmt.Sprint("z", i), Spot: i < sources-1,
			USDPerHour: float64(30 + 30*rng.IntN(6)), Rate: float64(50 + 50*rng.IntN(4))}
		w.Sources = append(w.Sources, s)
	}
	for range ticks {
		row := make([]int, sources)
		for i, s := range w.Sources {
			row[i] = Unlimited
			if s.Spot {
				row[i] = rng.IntN(top + 1)
			}
		}
		w.Capacity = append(w.Capacity, row)
		w.Demand = append(w.Demand, float64(rng.IntN(steps+1))*50)
	}
	return w
}

// bruteForce is the least cost of any holdings h_i(s) ≤ min(capacity, top) whose ready capacity
// covers demand (capped as checkSchedule caps it) from ColdStart on, by exhaustive search. With
// demand at most top × the lowest rate, more than top of a source is never needed.
func bruteForce(w Window, top int) float64 {
	p := newProblem(w)
	ticks, sources := len(w.Demand), len(w.Sources)
	held := make([][]int, ticks)
	for tick := range held {
		held[tick] = make([]int, sources)
	}
	best := math.Inf(1)
	var walk func(cell int, cost float64)
	walk = func(cell int, cost float64) {
		if cost >= best {
			return
		}
		if cell == ticks*sources {
			if scheduleCovers(p, held) {
				best = cost
			}
			return
		}
		tick, i := cell/sources, cell%sources
		most := top
		if c := w.Capacity[tick][i]; c != Unlimited {
			most = min(most, c)
		}
		for k := 0; k <= most; k++ {
			held[tick][i] = k
			walk(cell+1, cost+float64(k)*p.price[i])
		}
		held[tick][i] = 0
	}
	walk(0, 0)
	return best
}

func scheduleCovers(p *problem, held [][]int) bool {
	ready := readyOf(held, p.d)
	for tick := range held {
		supply := 0.0
		for i, k := range ready[tick] {
			supply += p.rate[i] * float64(k)
		}
		if !covers(supply, p.need[tick]) {
			return false
		}
	}
	return true
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestOptimalFullWindow: a day of a window shaped like the benchmark's (13 spot H100 zones of
// 0..2 replicas changing every 10 ticks, 3 spot A100 zones, on-demand H100 and A100 in two
// locations each, diurnal demand peaking at 16 H100 replicas) is too large for the exact
// program; the bounded path's schedule must be feasible, and its bound below its cost.
func TestOptimalFullWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	w := dayWindow(rng, 1440)
	if _, _, ok := newProblem(w).solveExact(); ok {
		t.Fatal("the exact program took a full window; this test no longer tests the bounded path")
	}
	o := NewOptimal(w)
	usd, exact := o.Bound()
	if usd > o.Cost()+1e-9 || usd <= 0 {
		t.Fatalf("bound %v, schedule %v", usd, o.Cost())
	}
	checkSchedule(t, w, o)
	t.Logf("schedule $%.0f, bound $%.0f (exact %v): gap %.2f%%", o.Cost(), usd, exact, 100*(o.Cost()-usd)/o.Cost())
}

// dayWindow is TestOptimalFullWindow's window, made up with the benchmark's shape.
func dayWindow(rng *rand.Rand, ticks int) Window {
	var w Window
	w.ColdStart = 5
	for z := range 13 {
		w.Sources = append(w.Sources, Source{Type: "H100", Zone: string(rune('a' + z)), Spot: true, USDPerHour: 25 + 15*rng.Float64(), Rate: 829, GPUs: 8})
	}
	for z := range 3 {
		w.Sources = append(w.Sources, Source{Type: "A100", Zone: string(rune('a' + z)), Spot: true, USDPerHour: 12 + 6*rng.Float64(), Rate: 172, GPUs: 8})
	}
	w.Sources = append(w.Sources, Source{Type: "H100", Zone: "od1", USDPerHour: 88, Rate: 829, GPUs: 8})
	w.Sources = append(w.Sources, Source{Type: "H100", Zone: "od2", USDPerHour: 98, Rate: 829, GPUs: 8})
	w.Sources = append(w.Sources, Source{Type: "A100", Zone: "od1", USDPerHour: 40, Rate: 172, GPUs: 8})
	w.Sources = append(w.Sources, Source{Type: "A100", Zone: "od2", USDPerHour: 33, Rate: 172, GPUs: 8})
	caps := make([]int, len(w.Sources))
	for t := range ticks {
		if t%10 == 0 {
			for i, s := range w.Sources {
				caps[i] = Unlimited
				if s.Spot {
					caps[i] = rng.IntN(3)
				}
			}
		}
		w.Capacity = append(w.Capacity, append([]int(nil), caps...))
		x := float64(t) / 1440 * 2 * math.Pi
		w.Demand = append(w.Demand, 16*829*(0.6+0.4*math.Sin(x))*(0.9+0.1*rng.Float64()))
	}
	return w
}
