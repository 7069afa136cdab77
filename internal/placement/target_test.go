package placement_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

var targetNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// targetHazard is every spot offer's hazard in targetSnapshot: with no history an offer's hazard
// is the market's, which is the prior. With the 9.5 min cold start and the 30 s reaction the loss
// window is 10 min, so each zone is lost within it with chance 1 − e^(−0.3/6) = 0.048771.
const targetHazard = 0.3

// targetPolicy hedges up to 5 spares, so the target, not the cap, decides how many.
func targetPolicy() placement.Policy {
	return placement.Policy{PriorHazardPerHour: targetHazard, MaxHedge: 5, ReactionTime: 30 * time.Second}
}

// targetSnapshot is a workload of 3 replicas on spot only, with 8 zones that have room (a
// launch finds capacity) and differ in price by a tenth of a cent, cheapest first.
func targetSnapshot(target float64) placement.Snapshot {
	var s placement.Snapshot
	for i, z := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		s.Locations = append(s.Locations, placement.Location{ID: z, Zone: z})
		s.Offers = append(s.Offers, placement.Offer{ID: z, Location: z, InstanceType: "g5", GPUModel: "A10G",
			GPUCount: 1, Market: placement.MarketSpot, PricePerHour: 1 + 0.001*float64(i), Capacity: 10})
	}
	s.Workloads = []placement.Workload{{ID: "w", Demand: 3, MinReplicas: 3, ColdStart: 9*time.Minute + 30*time.Second,
		Markets: []placement.Market{placement.MarketSpot}, AvailabilityTarget: target}}
	return s
}

// launches counts a decision's launched replicas by reason and the distinct offers they use.
func launches(d placement.Decision) (byReason map[placement.Reason]int, offers int) {
	byReason = map[placement.Reason]int{}
	seen := map[string]bool{}
	for _, a := range d.Actions {
		if a.Kind == placement.ActionLaunch {
			byReason[a.Reason] += a.Count
			seen[a.Offer] = true
		}
	}
	return byReason, len(seen)
}

// atLeast is the chance that at least k of n independent zones, each lost with chance p, are.
func atLeast(n, k int, p float64) float64 {
	sum := 0.0
	for j := k; j <= n; j++ {
		binom := 1.0
		for i := 0; i < j; i++ {
			binom = binom * float64(n-i) / float64(i+1)
		}
		sum += binom * math.Pow(p, float64(j)) * math.Pow(1-p, float64(n-j))
	}
	return sum
}

// With every zone lost within the window with chance p = 0.048771, a set of 3 + h replicas in
// distinct zones is short when more than h are lost: P(≥2 of 4) = 0.01336, P(≥3 of 5) = 0.001077,
// P(≥4 of 6) = 0.0000784. A target of 99 accepts half its 1 % budget, 0.005: two spares. A
// target of 99.9 accepts 0.0005: three.
func TestTargetHoldsMoreSpareForMore(t *testing.T) {
	p := 1 - math.Exp(-targetHazard/6)
	for _, tt := range []struct {
		target float64
		spares int
	}{{99, 2}, {99.9, 3}} {
		d := placement.Plan(targetSnapshot(tt.target), targetPolicy(), targetNow)
		by, offers := launches(d)
		if by[placement.ReasonHedge] != tt.spares || offers != 3+tt.spares {
			t.Fatalf("target %g: launches %v on %d offers, want %d hedges in distinct zones", tt.target, by, offers, tt.spares)
		}
		// The bound holds with the spares held, and one fewer would break it: the cheapest set.
		bound := (1 - tt.target/100) / 2
		n := 3 + tt.spares
		if got := atLeast(n, tt.spares+1, p); got > bound {
			t.Errorf("target %g: loss risk %.6f above %.6f", tt.target, got, bound)
		}
		if got := atLeast(n-1, tt.spares, p); got <= bound {
			t.Errorf("target %g: %d spares would do (risk %.6f)", tt.target, tt.spares-1, got)
		}
	}
}

// The hand-computed figures the test above relies on.
func TestTargetRiskHandComputed(t *testing.T) {
	p := 1 - math.Exp(-targetHazard/6)
	for _, c := range []struct {
		n, k int
		want float64
	}{{4, 2, 0.0133604}, {5, 3, 0.0010768}, {6, 4, 0.0000784}} {
		if got := atLeast(c.n, c.k, p); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("P(≥%d of %d) = %.7f, want %.7f", c.k, c.n, got, c.want)
		}
	}
}

// fallbackSnapshot is one replica wanted, two spot zones whose launches find capacity 9 times in
// 10 (Offer.Availability), and on-demand at 3×. One spot launch covers with 0.9, two with 0.99.
// The loss window is 5 min against a 30 s reaction (10 reactions), so the fallback must cover
// with 1 − (b/2)·10: 0.95 for a target of 99 (two spot launches), 0.995 for 99.9 (on-demand too).
func fallbackSnapshot(target float64) placement.Snapshot {
	s := placement.Snapshot{Locations: []placement.Location{{ID: "a", Zone: "a"}, {ID: "b", Zone: "b"}, {ID: "c", Zone: "c"}}}
	for i, z := range []string{"a", "b"} {
		s.Offers = append(s.Offers, placement.Offer{ID: z, Location: z, InstanceType: "g5", GPUModel: "A10G", GPUCount: 1,
			Market: placement.MarketSpot, PricePerHour: 1 + 0.01*float64(i), Capacity: 10, Availability: 0.9})
	}
	s.Offers = append(s.Offers, placement.Offer{ID: "c", Location: "c", InstanceType: "g5", GPUModel: "A10G", GPUCount: 1,
		Market: placement.MarketOnDemand, PricePerHour: 3})
	s.Workloads = []placement.Workload{{ID: "w", Demand: 1, ColdStart: 4*time.Minute + 30*time.Second, AvailabilityTarget: target}}
	return s
}

func TestTargetFallsBackToOnDemandForMore(t *testing.T) {
	pol := placement.Policy{MaxHedge: -1, ReactionTime: 30 * time.Second}
	for _, tt := range []struct {
		target         float64
		spot, onDemand int
	}{{99, 2, 0}, {99.9, 2, 1}} {
		d := placement.Plan(fallbackSnapshot(tt.target), pol, targetNow)
		spot, od := 0, 0
		for _, a := range d.Actions {
			if a.Kind != placement.ActionLaunch {
				continue
			}
			if a.Offer == "c" {
				od += a.Count
			} else {
				spot += a.Count
			}
		}
		if spot != tt.spot || od != tt.onDemand {
			t.Errorf("target %g: %d spot and %d on-demand launches, want %d and %d (%+v)", tt.target, spot, od, tt.spot, tt.onDemand, d.Actions)
		}
	}
}

// A workload without a target (0, negative, NaN) plans exactly as the policy's constants say, and
// a target whose parts equal those constants plans the same: 99 gives a hedge risk of 0.005 and,
// with 10 reactions in the loss window, a fallback confidence of 0.95, the defaults.
func TestNoTargetPlansAsBefore(t *testing.T) {
	base := placement.Plan(fallbackSnapshot(0), placement.Policy{}, targetNow)
	for _, target := range []float64{-1, math.NaN(), 99} {
		if got := placement.Plan(fallbackSnapshot(target), placement.Policy{}, targetNow); !reflect.DeepEqual(got.Actions, base.Actions) {
			t.Errorf("target %g: %+v, want %+v", target, got.Actions, base.Actions)
		}
	}
	pol := targetPolicy()
	pol.MaxHedge = 1
	base = placement.Plan(targetSnapshot(0), pol, targetNow)
	for _, target := range []float64{-1, math.NaN()} {
		if got := placement.Plan(targetSnapshot(target), pol, targetNow); !reflect.DeepEqual(got.Actions, base.Actions) {
			t.Errorf("target %g: %+v, want %+v", target, got.Actions, base.Actions)
		}
	}
}

func TestDemandShare(t *testing.T) {
	for _, c := range []struct{ target, want float64 }{{0, 0}, {-5, 0}, {99.7, 0.001}, {100, 0}, {120, 0}} {
		if got := placement.DemandShare(c.target); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("DemandShare(%g) = %g, want %g", c.target, got, c.want)
		}
	}
}

// ExpectWithin(0.1) is Expect; a smaller share covers more of the recent under-forecasts. On a
// series that alternates 100 and 150 the forecast sits between them, so the misses at 150 call
// for headroom: covering 1 in 1,000 of them needs at least what covering 1 in 10 does.
func TestExpectWithinCoversMoreForLess(t *testing.T) {
	f := placement.NewForecaster(1, 5)
	for i := range 300 {
		f.Observe(100 + 50*float64(i%2))
	}
	if got, want := f.ExpectWithin(0.1), f.Expect(); got != want {
		t.Fatalf("ExpectWithin(0.1) = %g, Expect() = %g", got, want)
	}
	lo, hi := f.ExpectWithin(0.6), f.ExpectWithin(0.001)
	if !(hi > lo) || hi > 2*f.Peak()+1e-9 {
		t.Fatalf("ExpectWithin(0.6) = %g, ExpectWithin(0.001) = %g, peak %g: want more for less, at most double", lo, hi, f.Peak())
	}
}

// The same market for a workload planned by rate (3 replicas' worth of demand): its budget is
// split three ways (losses, launches, demand), so 99 accepts a loss risk of 0.00333 (two spares:
// P(≥3 of 5) = 0.00108) and 99.9 accepts 0.000333 (three: P(≥4 of 6) = 0.0000784).
func TestTargetHoldsMoreSpareByRate(t *testing.T) {
	for _, tt := range []struct {
		target float64
		spares int
	}{{99, 2}, {99.9, 3}} {
		s := targetSnapshot(tt.target)
		s.Workloads[0].Demand, s.Workloads[0].MinReplicas = 0, 1
		s.Workloads[0].Throughput, s.Workloads[0].DemandRate = map[string]float64{"A10G": 100}, 300
		d := placement.Plan(s, targetPolicy(), targetNow)
		by, offers := launches(d)
		if by[placement.ReasonHedge] != tt.spares || offers != 3+tt.spares {
			t.Fatalf("target %g: launches %v on %d offers, want %d hedges in distinct zones", tt.target, by, offers, tt.spares)
		}
	}
}
