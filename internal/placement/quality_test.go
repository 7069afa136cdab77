package placement_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/placement/placementtest"
)

// basePolicy turns hedging and fallback off, so the planner solves the same problem as the exact
// solver: the cheapest placement of the needed replicas under the rules.
var basePolicy = placement.Policy{MaxHedge: -1, DisableFallback: true}

var qualityNow = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

type gapStats struct {
	n, infeasible int
	mean, worst   float64
}

// measureGaps compares plan (the planner, or a baseline) with the exact solver on count random
// small instances.
func measureGaps(count int, plan func(placement.Snapshot) placement.Decision) gapStats {
	r := rand.New(rand.NewPCG(1, 2))
	var st gapStats
	for range count {
		s, w, n := placementtest.Small(r, 6, 8)
		best, _, ok := placementtest.Exact(s, w, n)
		if !ok {
			continue
		}
		d := plan(s)
		placed := 0
		for _, a := range d.Actions {
			if a.Kind == placement.ActionLaunch {
				placed += a.Count
			}
		}
		st.n++
		if placed < n {
			st.infeasible++
			continue
		}
		gap := (d.CostPerHourAfter - best) / best
		st.mean += gap
		st.worst = max(st.worst, gap)
	}
	if st.n > st.infeasible {
		st.mean /= float64(st.n - st.infeasible)
	}
	return st
}

func TestPlannerNearExactOnSmallInstances(t *testing.T) {
	st := measureGaps(qualityInstances(), func(s placement.Snapshot) placement.Decision {
		return placement.Plan(s, basePolicy, qualityNow)
	})
	t.Logf("%d instances: mean gap %.3f%%, worst %.3f%%, %d short of a feasible placement",
		st.n, 100*st.mean, 100*st.worst, st.infeasible)
	if st.n < 200 {
		t.Fatalf("only %d feasible instances: the generator is off", st.n)
	}
	if st.mean > 0.01 || st.worst > 0.01 || st.infeasible > 0 {
		t.Errorf("mean gap %.3f%%, worst %.3f%% (want both <= 1%%), %d instances short", 100*st.mean, 100*st.worst, st.infeasible)
	}
}

func BenchmarkPlanQualitySmall(b *testing.B) {
	var st, base gapStats
	for b.Loop() {
		st = measureGaps(300, func(s placement.Snapshot) placement.Decision {
			return placement.Plan(s, basePolicy, qualityNow)
		})
		// Baseline: the cheapest offers by price alone, ignoring the spread and location rules
		// (a lower bound the rules may not allow, so its gap can be negative).
		base = measureGaps(300, cheapestOnly)
	}
	b.ReportMetric(100*st.mean, "mean_gap_%")
	b.ReportMetric(100*st.worst, "worst_gap_%")
	b.ReportMetric(float64(st.infeasible), "short")
	b.ReportMetric(100*base.mean, "baseline_mean_gap_%")
	b.ReportMetric(100*base.worst, "baseline_worst_gap_%")
}

// cheapestOnly places every replica on the cheapest qualifying offers with room, rules aside.
func cheapestOnly(s placement.Snapshot) placement.Decision {
	w := s.Workloads[0]
	need := max(w.Demand, w.MinReplicas)
	locs := map[string]placement.Location{}
	for _, l := range s.Locations {
		locs[l.ID] = l
	}
	left := map[string]int{}
	d := placement.Decision{}
	for need > 0 {
		best := -1
		for i, o := range s.Offers {
			if placementtest.Qualifies(o, locs[o.Location], w) && left[o.ID] < o.Capacity &&
				(best < 0 || o.PricePerHour < s.Offers[best].PricePerHour) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		left[s.Offers[best].ID]++
		d.CostPerHourAfter += s.Offers[best].PricePerHour
		d.Actions = append(d.Actions, placement.Action{Kind: placement.ActionLaunch, Count: 1})
		need--
	}
	return d
}

// qualityInstances is how many random instances the quality test compares: BURSAR_QUALITY_N
// raises it for a longer check.
func qualityInstances() int {
	if n, err := strconv.Atoi(os.Getenv("BURSAR_QUALITY_N")); err == nil && n > 0 {
		return n
	}
	return 400
}
