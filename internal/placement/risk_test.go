package placement_test

import (
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// TestEstimatesAreThePlannersOwn: Estimates lists the offers one replica fits (not another GPU,
// not a market the workload refuses), and a spot offer with a recent preemption has a higher
// hazard and a lower launch chance than one without.
func TestEstimatesAreThePlannersOwn(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	offer := func(id string, m placement.Market, model string) placement.Offer {
		return placement.Offer{ID: id, Location: "a", GPUModel: model, GPUCount: 1, Market: m, PricePerHour: 1}
	}
	hit := offer("hit", placement.MarketSpot, "H100-80GB")
	hit.History = []placement.Observation{{At: now.Add(-time.Minute), Kind: placement.ObsPreempted, Lived: time.Hour}}
	s := placement.Snapshot{Locations: []placement.Location{{ID: "a"}}, Offers: []placement.Offer{
		hit, offer("calm", placement.MarketSpot, "H100-80GB"), offer("od", placement.MarketOnDemand, "H100-80GB"),
		offer("other-gpu", placement.MarketSpot, "A100-80GB"), offer("reserved", placement.MarketReserved, "H100-80GB")}}
	w := placement.Workload{ID: "tune", GPUModels: []string{"H100-80GB"}, GPUsPerReplica: 1,
		Markets: []placement.Market{placement.MarketSpot, placement.MarketOnDemand}}
	got := map[string]placement.Estimate{}
	for _, e := range placement.Estimates(&s, &w, placement.Policy{}, now) {
		got[e.Offer.ID] = e
	}
	if len(got) != 3 || got["other-gpu"].Offer.ID != "" || got["reserved"].Offer.ID != "" {
		t.Fatalf("estimates for %v, want hit, calm and od", got)
	}
	if h, c := got["hit"], got["calm"]; !(h.Hazard > c.Hazard) || !(h.LaunchChance < c.LaunchChance) {
		t.Errorf("hit = %+v, calm = %+v: want the preempted offer riskier", h, c)
	}
	if od := got["od"]; od.Hazard != 0 || !od.Usable {
		t.Errorf("on-demand = %+v, want no hazard and usable", od)
	}
}
