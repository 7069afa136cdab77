package placement

import (
	"testing"
	"time"
)

func TestPlanLaunchesCheapestSpreadSpot(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := Snapshot{
		Locations: []Location{{ID: "a", Zone: "a"}, {ID: "b", Zone: "b"}},
		Offers: []Offer{
			{ID: "a-spot", Location: "a", InstanceType: "p3", GPUModel: "V100", GPUCount: 1, Market: MarketSpot, PricePerHour: 1, Capacity: 5},
			{ID: "b-spot", Location: "b", InstanceType: "p3", GPUModel: "V100", GPUCount: 1, Market: MarketSpot, PricePerHour: 1.1, Capacity: 5},
			{ID: "a-od", Location: "a", InstanceType: "p3", GPUModel: "V100", GPUCount: 1, Market: MarketOnDemand, PricePerHour: 3},
		},
		Workloads: []Workload{{ID: "w", GPUModels: []string{"V100"}, MinReplicas: 3, ColdStart: 2 * time.Minute}},
	}
	d := Plan(s, Policy{}, now)
	got := map[string]int{}
	for _, a := range d.Actions {
		if a.Kind == ActionLaunch {
			got[a.Offer] += a.Count
		}
	}
	if got["a-spot"] != 2 || got["b-spot"] != 1 {
		t.Fatalf("launches = %v, want a-spot:2 b-spot:1; plan %+v", got, d)
	}
	if d.CostPerHourAfter != 3.1 {
		t.Errorf("cost after = %v, want 3.1", d.CostPerHourAfter)
	}
}
