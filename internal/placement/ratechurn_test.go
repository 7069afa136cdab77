package placement

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// The churn harness: a workload planned every minute against a stepped demand, its replicas
// carried over from one plan to the next (a launch is ready after the cold start, a drain leaves
// at once, nothing is reclaimed), counting what the plans launch and drain. It shows whether the
// planner adds to and trims its incumbents as demand moves, or re-mixes the set.

// churnOffers are 3 GPU types × 2 locations × spot and on demand, priced near the demo's catalog
// (examples/demo/prices): per unit served, spot T4 and spot V100 are close, as there.
func churnOffers() ([]Location, []Offer) {
	locs := []Location{
		{ID: "east", Provider: "aws", Region: "us-east-1", Zone: "us-east-1a", EgressPerGB: 0.09},
		{ID: "gcp", Provider: "gcp", Region: "us-east1", Zone: "us-east1-b", EgressPerGB: 0.12},
	}
	types := []struct {
		model     string
		od, spot  float64
		locFactor float64
	}{
		{"T4", 0.526, 0.181, 1.04}, {"V100-16GB", 3.06, 0.52, 0.97}, {"A100-40GB", 3.67, 1.44, 1.02},
	}
	var offers []Offer
	for li, l := range locs {
		for _, t := range types {
			k := 1.0
			if li == 1 {
				k = t.locFactor
			}
			for _, m := range []struct {
				market Market
				price  float64
			}{{MarketOnDemand, t.od}, {MarketSpot, t.spot}} {
				offers = append(offers, Offer{ID: fmt.Sprintf("%s-%s-%s", l.ID, t.model, m.market), Location: l.ID,
					InstanceType: t.model, GPUModel: t.model, GPUCount: 1, GPUMemoryGB: 16, Market: m.market,
					PricePerHour: m.price * k})
			}
		}
	}
	return locs, offers
}

// churnWorkload is the demo's chat workload (examples/demo/bursar.yaml).
func churnWorkload() Workload {
	return Workload{ID: "chat", GPUModels: []string{"T4", "V100-16GB", "A100-40GB"}, GPUsPerReplica: 1,
		MinReplicas: 3, MaxReplicas: 8, MinLocations: 2, WeightsGB: 15, ColdStart: 3 * time.Minute,
		Throughput: map[string]float64{"T4": 800, "V100-16GB": 2250, "A100-40GB": 3900}, RateUnit: "tokens/s"}
}

// chatDemand is examples/demo/load/chat.csv in tokens/s, scaled as internal/demo scales it: its
// peak is 1.5 times the minimum replicas' worth of a mean replica of the workload's types.
func chatDemand(t *testing.T, w Workload) []float64 {
	t.Helper()
	f, err := os.Open("../../examples/demo/load/chat.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	peak := 0.0
	for i, r := range rows[1:] {
		in, err1 := strconv.ParseFloat(r[2], 64)
		gen, err2 := strconv.ParseFloat(r[3], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("chat.csv:%d: %v %v", i+2, err1, err2)
		}
		out = append(out, (in+gen)/60)
		peak = max(peak, out[len(out)-1])
	}
	mean := 0.0
	for _, r := range w.Throughput {
		mean += r / float64(len(w.Throughput))
	}
	k := 1.5 * float64(w.MinReplicas) * mean / peak
	for i := range out {
		out[i] *= k
	}
	return out
}

// churnCount is what a run of plans did.
type churnCount struct {
	launches, drains int
	moves            int // replicas launched or drained as cheaper_offer
	short            int // minutes the ready replicas served less than the demand
}

// simulate plans w every minute for each demand in demand (setDemand puts it on the workload)
// and applies every plan, moves setting LastMoveAt as the arbiter does.
func simulate(w Workload, demand []float64, setDemand func(*Workload, float64)) churnCount {
	locs, offers := churnOffers()
	model := map[string]string{}
	for _, o := range offers {
		model[o.ID] = o.GPUModel
	}
	p := DefaultPolicy()
	start := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	var reps []Replica
	var c churnCount
	next := 0
	for m, d := range demand {
		now := start.Add(time.Duration(m) * time.Minute)
		served, rates := 0.0, churnWorkload().Throughput
		for i := range reps {
			if reps[i].State == StateLaunching && !now.Before(reps[i].Since.Add(w.ColdStart)) {
				reps[i].State = StateReady
			}
			if reps[i].State == StateReady {
				served += rates[model[reps[i].Offer]]
			}
		}
		if served < d-rateSlack(d) {
			c.short++
		}
		setDemand(&w, d)
		dec := Plan(Snapshot{Locations: locs, Offers: offers, Workloads: []Workload{w}, Replicas: reps}, p, now)
		for _, a := range dec.Actions {
			switch a.Kind {
			case ActionLaunch:
				for range a.Count {
					reps = append(reps, Replica{ID: fmt.Sprintf("r%04d", next), Workload: w.ID, Offer: a.Offer,
						State: StateLaunching, Since: now})
					next++
				}
				c.launches += a.Count
				if a.Reason == ReasonCheaperOffer {
					c.moves += a.Count
					w.LastMoveAt = now
				}
			case ActionDrain:
				c.drains += len(a.Replicas)
				if a.Reason == ReasonCheaperOffer {
					c.moves += len(a.Replicas)
				}
				reps = dropReplicas(reps, a.Replicas)
			}
		}
	}
	return c
}

func dropReplicas(reps []Replica, ids []string) []Replica {
	out := reps[:0]
	for _, r := range reps {
		keep := true
		for _, id := range ids {
			keep = keep && r.ID != id
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

// TestRatePlanChurn plans the demo's chat demand by rate and, beside it, the same demand in
// replicas of one type (V100s): as stepped, and as the arbiter measures it (within 7 % of it,
// minute by minute). As demand moves, the plan by rate must add to and trim its set rather than
// re-mix it: no more moves (launches or drains labelled cheaper_offer) than the plan in replicas,
// and not many more launches.
func TestRatePlanChurn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		jitter float64
	}{{"stepped", 0}, {"measured", 0.07}} {
		t.Run(tc.name, func(t *testing.T) {
			w := churnWorkload()
			demand := chatDemand(t, w)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range demand {
				demand[i] *= 1 + tc.jitter*(2*r.Float64()-1)
			}
			byRate := simulate(w, demand, func(w *Workload, d float64) { w.DemandRate = d })
			one := churnWorkload()
			one.GPUModels, one.Throughput = []string{"V100-16GB"}, nil
			v100 := w.Throughput["V100-16GB"]
			byReplica := simulate(one, demand, func(w *Workload, d float64) { w.Demand = int(math.Ceil(d / v100)) })
			t.Logf("%d minutes; by rate: %+v", len(demand), byRate)
			t.Logf("in V100 replicas: %+v", byReplica)
			if byRate.moves > byReplica.moves {
				t.Errorf("by rate, %d moves; in replicas, %d", byRate.moves, byReplica.moves)
			}
			if byRate.launches > 2*byReplica.launches+5 {
				t.Errorf("by rate, %d launches; in replicas, %d: the set is re-mixed as demand moves",
					byRate.launches, byReplica.launches)
			}
		})
	}
}
