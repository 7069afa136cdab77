package placement_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/placement/placementtest"
)

var benchNow = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// reportLatency reports the p50 and p99 of the samples in milliseconds under the given prefix.
func reportLatency(b *testing.B, prefix string, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	q := func(p float64) float64 {
		return float64(samples[min(len(samples)-1, int(p*float64(len(samples))))].Nanoseconds()) / 1e6
	}
	b.ReportMetric(q(0.50), prefix+"p50_ms")
	b.ReportMetric(q(0.99), prefix+"p99_ms")
}

// BenchmarkPlanFull re-plans an estate of 10,000 workloads over 5,000 offers from scratch (index
// build included). Baseline: the same estate planned with an index of one list (no grouping by
// GPU model), so every workload scans offers of every model.
func BenchmarkPlanFull(b *testing.B) {
	s := placementtest.Estate(rand.New(rand.NewPCG(7, 7)), 10_000, 5_000, benchNow)
	var samples []time.Duration
	for b.Loop() {
		start := time.Now()
		d := placement.Plan(s, placement.Policy{}, benchNow)
		samples = append(samples, time.Since(start))
		if len(d.Actions) == 0 {
			b.Fatal("no actions planned")
		}
	}
	reportLatency(b, "", samples)
	// Baseline, measured in the same run: workloads with no model set scan the one list of all
	// offers, filtering by GPU memory.
	flat := s
	flat.Workloads = slices.Clone(s.Workloads)
	for i := range flat.Workloads {
		flat.Workloads[i].GPUModels = nil
		flat.Workloads[i].MinGPUMemoryGB = 80
	}
	var base []time.Duration
	for range 3 {
		start := time.Now()
		placement.Plan(flat, placement.Policy{}, benchNow)
		base = append(base, time.Since(start))
	}
	reportLatency(b, "baseline_unindexed_", base)
}

// BenchmarkReplanAfterReclaim plans the estate once, then re-plans after one reclaim notice with
// Planner.Apply. Baseline: a full re-plan of the same change, measured in the same run.
func BenchmarkReplanAfterReclaim(b *testing.B) {
	s := placementtest.Estate(rand.New(rand.NewPCG(7, 7)), 10_000, 5_000, benchNow)
	r := rand.New(rand.NewPCG(1, 1))
	var samples []time.Duration
	pl := placement.NewPlanner(s, placement.Policy{}, benchNow)
	n := 0
	for b.Loop() {
		if n%200 == 199 { // a fresh planner now and then, so reclaims do not pile up
			b.StopTimer()
			pl = placement.NewPlanner(s, placement.Policy{}, benchNow)
			b.StartTimer()
		}
		n++
		rep := s.Replicas[r.IntN(len(s.Replicas))]
		rep.State, rep.Deadline = placement.StateReclaimed, benchNow.Add(2*time.Minute)
		u := placement.Update{Replicas: []placement.Replica{rep}, Observations: []placement.OfferObservation{{
			Offer: rep.Offer, Observation: placement.Observation{At: benchNow, Kind: placement.ObsPreempted, Lived: 2 * time.Hour}}}}
		start := time.Now()
		d := pl.Apply(u, benchNow)
		samples = append(samples, time.Since(start))
		if len(d.Actions) == 0 {
			b.Fatal("a reclaim planned nothing")
		}
	}
	reportLatency(b, "", samples)
	var base []time.Duration
	for range 3 {
		start := time.Now()
		placement.Plan(s, placement.Policy{}, benchNow)
		base = append(base, time.Since(start))
	}
	reportLatency(b, "baseline_full_", base)
}

// BenchmarkPlanServing plans, from scratch, an estate of 1,000 workloads planned by rate over 50
// locations selling 6 GPU types on spot and on demand, each workload accepting 2 or 3 types with
// a rate each (issue 29's goal: under a second a pass). Baseline, measured in the same run: the
// same estate planned in replicas, each workload on its fastest type only, asking the replicas
// of it that cover its rate (what a team that picks one type runs).
func BenchmarkPlanServing(b *testing.B) {
	s := placementtest.ServingEstate(rand.New(rand.NewPCG(29, 29)), 1_000, 50, 6, benchNow)
	var samples []time.Duration
	var d placement.Decision
	for b.Loop() {
		start := time.Now()
		d = placement.Plan(s, placement.Policy{}, benchNow)
		samples = append(samples, time.Since(start))
		if len(d.Actions) == 0 {
			b.Fatal("no actions planned")
		}
	}
	reportLatency(b, "", samples)
	b.ReportMetric(d.CostPerHourAfter, "usd_per_hour")
	b.ReportMetric(float64(len(d.Shortfalls)), "shortfalls")
	flat := s
	flat.Workloads = slices.Clone(s.Workloads)
	for i := range flat.Workloads {
		w := &flat.Workloads[i]
		fastest := w.GPUModels[0]
		for _, m := range w.GPUModels {
			if w.Throughput[m] > w.Throughput[fastest] {
				fastest = m
			}
		}
		w.GPUModels = []string{fastest}
		w.Demand = int(math.Ceil(w.DemandRate / w.Throughput[fastest]))
		w.Throughput, w.DemandRate = nil, 0
	}
	var base []time.Duration
	for range 3 {
		start := time.Now()
		d = placement.Plan(flat, placement.Policy{}, benchNow)
		base = append(base, time.Since(start))
	}
	reportLatency(b, "baseline_replicas_", base)
	b.ReportMetric(d.CostPerHourAfter, "baseline_replicas_usd_per_hour")
}
