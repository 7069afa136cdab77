package placementtest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

var gpuModels = []string{"H100-80GB", "A100-80GB", "A100-40GB", "L40S", "V100", "A10G", "L4", "T4"}

// Small builds a random small instance for comparing the planner with Exact: one workload with no
// replicas running, at most maxOffers offers over two to four locations, and a need of at most
// maxReplicas. Spot offers carry capacity hints, so every offer is known to have room.
func Small(r *rand.Rand, maxOffers, maxReplicas int) (placement.Snapshot, placement.Workload, int) {
	var s placement.Snapshot
	nl := 2 + r.IntN(3)
	for i := range nl {
		s.Locations = append(s.Locations, placement.Location{ID: fmt.Sprintf("l%d", i),
			Zone: fmt.Sprintf("z%d", i%3), Provider: []string{"aws", "gcp"}[i%2]})
	}
	no := 2 + r.IntN(maxOffers-1)
	for i := range no {
		m := []placement.Market{placement.MarketSpot, placement.MarketSpot, placement.MarketOnDemand}[r.IntN(3)]
		price := 1 + r.Float64()*3
		if m == placement.MarketOnDemand {
			price *= 2
		}
		s.Offers = append(s.Offers, placement.Offer{ID: fmt.Sprintf("o%d", i),
			Location: fmt.Sprintf("l%d", r.IntN(nl)), InstanceType: []string{"p3", "p4d"}[r.IntN(2)],
			GPUModel: "A100-80GB", GPUCount: 1 + r.IntN(2), Market: m,
			PricePerHour: float64(int(price*100)) / 100, Capacity: 1 + r.IntN(5)})
	}
	n := 1 + r.IntN(maxReplicas)
	w := placement.Workload{ID: "w", GPUModels: []string{"A100-80GB"}, GPUsPerReplica: 1,
		MinReplicas: n, Demand: n, MinLocations: r.IntN(3), ColdStart: 2 * time.Minute}
	s.Workloads = []placement.Workload{w}
	return s, w, n
}

// Estate builds a large random estate for benchmarks: workloads over offers spread across
// providers, regions and zones, each workload running replicas on qualifying offers.
func Estate(r *rand.Rand, workloads, offers int, now time.Time) placement.Snapshot {
	var s placement.Snapshot
	nl := max(offers/20, 1)
	for i := range nl {
		s.Locations = append(s.Locations, placement.Location{ID: fmt.Sprintf("loc%d", i),
			Provider: []string{"aws", "gcp", "azure", "lambda"}[i%4], Region: fmt.Sprintf("r%d", i/4),
			Zone: fmt.Sprintf("z%d", i), Residency: []string{[]string{"us", "eu"}[i%2]}, EgressPerGB: 0.09})
	}
	byModel := map[string][]int{}
	for i := range offers {
		m := []placement.Market{placement.MarketSpot, placement.MarketSpot, placement.MarketOnDemand, placement.MarketReserved}[r.IntN(4)]
		model := gpuModels[r.IntN(len(gpuModels))]
		o := placement.Offer{ID: fmt.Sprintf("off%d", i), Location: fmt.Sprintf("loc%d", r.IntN(nl)),
			InstanceType: fmt.Sprintf("t%d", r.IntN(6)), GPUModel: model, GPUCount: []int{1, 2, 4, 8}[r.IntN(4)],
			GPUMemoryGB: 80, Market: m, PricePerHour: 0.5 + r.Float64()*30, Capacity: 50 + r.IntN(200)}
		if m == placement.MarketSpot && r.IntN(4) == 0 {
			o.History = []placement.Observation{
				{At: now.Add(-time.Duration(r.IntN(180)) * time.Minute), Kind: placement.ObsPreempted, Lived: time.Hour},
				{At: now.Add(-time.Duration(r.IntN(60)) * time.Minute), Kind: placement.ObsLaunchFailed},
			}
		}
		s.Offers = append(s.Offers, o)
		byModel[model] = append(byModel[model], i)
	}
	for i := range workloads {
		model := gpuModels[r.IntN(len(gpuModels))]
		n := 1 + r.IntN(4)
		w := placement.Workload{ID: fmt.Sprintf("w%05d", i), Team: fmt.Sprintf("team%d", i%20),
			GPUModels: []string{model}, GPUsPerReplica: []int{1, 2}[r.IntN(2)], MinReplicas: n, Demand: n + r.IntN(2),
			MaxReplicas: n + 3, MinLocations: r.IntN(2) + 1, WeightsGB: 40, ColdStart: 3 * time.Minute}
		s.Workloads = append(s.Workloads, w)
		cands := byModel[model]
		for k := range n {
			if len(cands) == 0 {
				break
			}
			o := s.Offers[cands[r.IntN(len(cands))]]
			s.Replicas = append(s.Replicas, placement.Replica{ID: fmt.Sprintf("%s-r%d", w.ID, k),
				Workload: w.ID, Offer: o.ID, State: placement.StateReady, Since: now.Add(-2 * time.Hour)})
		}
	}
	return s
}
