package placement_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/placement/placementtest"
)

// heldRate is what the replicas w holds once d is applied serve, and how many there are.
func heldRate(s placement.Snapshot, d placement.Decision, w placement.Workload) (float64, int) {
	model := map[string]string{}
	for _, o := range s.Offers {
		model[o.ID] = o.GPUModel
	}
	held, _ := after(s, d)
	rate, n := 0.0, 0
	for _, h := range held {
		if h[0] == w.ID {
			rate += w.Throughput[model[h[1]]]
			n++
		}
	}
	return rate, n
}

// Without budgets, a workload planned by rate holds replicas serving its demand rate, at least
// its minimum count, and a chosen count within its bounds, or the plan reports a shortfall.
func TestPropertyRateCoveredOrShort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		s.Budgets = nil
		pl := placement.NewPlanner(s, placement.Policy{}, propNow)
		d := pl.Decision()
		short := map[string]placement.Shortfall{}
		for _, sf := range d.Shortfalls {
			short[sf.Workload] = sf
		}
		for _, w := range s.Workloads {
			if len(w.Throughput) == 0 {
				continue
			}
			rate, n := heldRate(s, d, w)
			target, _ := pl.Target(w.ID)
			sf, isShort := short[w.ID]
			if isShort {
				if sf.PlacedRate > rate+1e-6 || sf.Placed > target || sf.WantedRate != w.DemandRate {
					t.Fatalf("%s: shortfall %+v inconsistent with %.0f held, target %d", w.ID, sf, rate, target)
				}
				continue
			}
			if rate < w.DemandRate-1e-6 || n < w.MinReplicas {
				t.Fatalf("%s: holds %d replicas serving %.0f; needs %.0f and %d, no shortfall", w.ID, n, rate, w.DemandRate, w.MinReplicas)
			}
			if lo := max(w.MinReplicas, w.MinLocations); target < lo || (w.MaxReplicas > 0 && target > max(w.MaxReplicas, lo)) {
				t.Fatalf("%s: planned %d replicas outside [%d, %d]", w.ID, target, lo, w.MaxReplicas)
			}
		}
	})
}

// With room everywhere, on-demand offers only and no hedge or fallback, a fresh workload planned
// by rate is covered, and no launched replica can go without dropping below its rate or minimum.
func TestPropertyRateCoverIsTight(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		s.Replicas, s.Budgets = nil, nil
		w := &s.Workloads[0]
		drawRates(t, w)
		w.MaxReplicas, w.MinLocations = 0, 0
		s.Workloads = s.Workloads[:1]
		locs := map[string]placement.Location{}
		for _, l := range s.Locations {
			locs[l.ID] = l
		}
		qualifies := false
		for i := range s.Offers {
			o := &s.Offers[i]
			o.Market, o.Capacity, o.History = placement.MarketOnDemand, 0, nil
			qualifies = qualifies || placementtest.Qualifies(*o, locs[o.Location], *w)
		}
		d := placement.Plan(s, placement.Policy{MaxHedge: -1, DisableFallback: true}, propNow)
		rate, n := heldRate(s, d, *w)
		if !qualifies {
			return
		}
		if len(d.Shortfalls) > 0 || rate < w.DemandRate || n < w.MinReplicas {
			t.Fatalf("%d replicas serve %.0f of %.0f (minimum %d), shortfalls %+v", n, rate, w.DemandRate, w.MinReplicas, d.Shortfalls)
		}
		model := map[string]string{}
		for _, o := range s.Offers {
			model[o.ID] = o.GPUModel
		}
		for _, a := range d.Actions {
			if r := w.Throughput[model[a.Offer]]; rate-r >= w.DemandRate && n-1 >= w.MinReplicas {
				t.Fatalf("a replica on %s (%.0f) is waste: %d replicas serve %.0f for %.0f (minimum %d)",
					a.Offer, r, n, rate, w.DemandRate, w.MinReplicas)
			}
		}
	})
}
