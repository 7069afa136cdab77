package placementtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// servingTypes are the GPU types of ServingEstate: a price per replica-hour on demand and what
// one replica of a mid-sized model serves, roughly in the order of the public catalogs and
// SplitwiseSim's table (A100 172 and H100 829 output tokens/s for Llama-2-70B on 8 GPUs); the
// others are placed between them by hand. Benchmarks only: no result depends on the exact values.
var servingTypes = []struct {
	model string
	price float64
	rate  float64
}{
	{"H100-80GB", 98.32, 829}, {"A100-80GB", 32.77, 172}, {"H200-141GB", 110, 1000},
	{"L40S", 18, 90}, {"A10G", 16.3, 40}, {"L4", 7.8, 25},
}

// ServingEstate builds an estate of workloads planned by rate for benchmarks: every location
// sells each of the first types GPU types (at most len(servingTypes)) on spot and on demand, and
// every workload accepts two or three of them, with a rate each scaled by the workload's own
// model size, a demand rate of one to twelve replicas of its fastest type, and ready replicas on
// some of its types.
func ServingEstate(r *rand.Rand, workloads, locations, types int, now time.Time) placement.Snapshot {
	types = min(types, len(servingTypes))
	var s placement.Snapshot
	for i := range locations {
		l := placement.Location{ID: fmt.Sprintf("loc%d", i), Provider: []string{"aws", "gcp", "azure"}[i%3],
			Region: fmt.Sprintf("r%d", i/3), Zone: fmt.Sprintf("z%d", i), EgressPerGB: 0.09}
		s.Locations = append(s.Locations, l)
		for t := range types {
			st := servingTypes[t]
			od := st.price * (0.9 + 0.3*r.Float64())
			s.Offers = append(s.Offers,
				placement.Offer{ID: fmt.Sprintf("%s-%s-od", l.ID, st.model), Location: l.ID, InstanceType: st.model,
					GPUModel: st.model, GPUCount: 8, GPUMemoryGB: 80, Market: placement.MarketOnDemand, PricePerHour: od},
				spotOffer(r, l.ID, st.model, od, now))
		}
	}
	for i := range workloads {
		w := placement.Workload{ID: fmt.Sprintf("svc%04d", i), Team: fmt.Sprintf("team%d", i%20), GPUsPerReplica: 8,
			MinReplicas: 1 + r.IntN(2), MinLocations: 1 + r.IntN(2), WeightsGB: 140, ColdStart: 5 * time.Minute,
			Throughput: map[string]float64{}, RateUnit: "tokens/s"}
		scale, fastest := 0.5+r.Float64(), 0.0
		for _, t := range r.Perm(types)[:2+r.IntN(2)] {
			rate := math.Round(servingTypes[t].rate * scale * (0.9 + 0.2*r.Float64()))
			w.GPUModels = append(w.GPUModels, servingTypes[t].model)
			w.Throughput[servingTypes[t].model] = rate
			fastest = max(fastest, rate)
		}
		w.DemandRate = math.Round(fastest * (1 + 11*r.Float64()))
		s.Workloads = append(s.Workloads, w)
		for k := range 1 + r.IntN(4) {
			m := w.GPUModels[r.IntN(len(w.GPUModels))]
			market := []string{"od", "spot"}[r.IntN(2)]
			s.Replicas = append(s.Replicas, placement.Replica{ID: fmt.Sprintf("%s-r%d", w.ID, k), Workload: w.ID,
				Offer: fmt.Sprintf("loc%d-%s-%s", r.IntN(locations), m, market), State: placement.StateReady,
				Since: now.Add(-2 * time.Hour)})
		}
	}
	return s
}

// spotOffer is the spot offer beside an on-demand price: 30 to 60 % of it, with room for a few
// dozen replicas, and now and then a recent preemption and failed launch.
func spotOffer(r *rand.Rand, loc, model string, od float64, now time.Time) placement.Offer {
	o := placement.Offer{ID: fmt.Sprintf("%s-%s-spot", loc, model), Location: loc, InstanceType: model,
		GPUModel: model, GPUCount: 8, GPUMemoryGB: 80, Market: placement.MarketSpot,
		PricePerHour: od * (0.3 + 0.3*r.Float64()), Capacity: 10 + r.IntN(40)}
	if r.IntN(4) == 0 {
		o.History = []placement.Observation{
			{At: now.Add(-time.Duration(r.IntN(180)) * time.Minute), Kind: placement.ObsPreempted, Lived: time.Hour},
			{At: now.Add(-time.Duration(r.IntN(60)) * time.Minute), Kind: placement.ObsLaunchFailed},
		}
	}
	return o
}
