// Package eventstest provides valid sample events of every type, for tests across packages.
package eventstest

import (
	"fmt"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// Samples returns one valid, stamped event of every type, observed at at (UTC). Varying n gives
// distinct facts with distinct ids.
func Samples(at time.Time, n int) []events.Event {
	at = at.UTC()
	s := fmt.Sprint(n)
	all := []events.Event{
		&events.PriceObserved{Meta: events.Meta{At: at}, Provider: "aws", Region: "us-east-1",
			Zone: "us-east-1a", InstanceType: "p5.48xlarge-" + s, GPUModel: "H100-80GB", GPUCount: 8,
			GPUMemoryGB: 640, Market: events.Spot, USDPerHour: 31.4 + float64(n), Source: "aws-spot"},
		&events.CapacityReclaimed{Meta: events.Meta{At: at}, Provider: "aws", Region: "us-east-1",
			Location: "aws-use1", Zone: "us-east-1a", Instance: "i-0abc" + s, Node: "node-" + s,
			Kind: events.ReclaimInterruption, NoticeAt: at, Deadline: at.Add(2 * time.Minute),
			Source: "aws-imds"},
		&events.GPUSample{Meta: events.Meta{At: at}, Location: "aws-use1", Node: "node-1",
			UUID: "GPU-" + s, Index: n % 8, Model: "H100-80GB", UtilizationPct: 87.5,
			MemoryUsedBytes: 60 << 30, MemoryTotalBytes: 80 << 30, PowerW: 612.3, TemperatureC: 64},
		&events.TokensSample{Meta: events.Meta{At: at}, Location: "aws-use1", Workload: "llm",
			Replica: "llm-" + s, Server: "vllm", PromptTokens: 1200 + int64(n),
			GenerationTokens: 3400, Requests: 17},
		&events.ReplicaState{Meta: events.Meta{At: at}, Workload: "llm", Location: "aws-use1",
			Provider: "aws", Market: events.Spot, Offer: "aws-use1/p5.48xlarge/spot-" + s,
			GPUModel: "H100-80GB", GPUs: 8, USDPerHour: 31.4, Desired: 3, Ready: 2,
			Instances: []string{"i-0a" + s, "i-0b" + s}},
		&events.PlanDecided{Meta: events.Meta{At: at}, Workload: "llm", PlanID: "plan-" + s,
			Actions: []events.PlanAction{{ID: "act-" + s, Kind: "launch", Location: "gcp-usc1",
				Offer: "gcp-usc1/a3-highgpu-8g/spot", Market: events.Spot, Replicas: 2, Delta: 1,
				Reason: "reclaim"}},
			USDPerHourWas: 94.2, USDPerHourNow: 88.1},
		&events.ActionUpdated{Meta: events.Meta{At: at}, Workload: "llm", ActionID: "act-" + s,
			PlanID: "plan-" + s, Status: events.ActionApplied, Kind: "launch", Location: "gcp-usc1",
			Offer: "gcp-usc1/a3-highgpu-8g/spot", Market: events.Spot, Replicas: 2,
			Reason: "reclaim", Actor: "arbiter"},
		&events.BudgetAlert{Meta: events.Meta{At: at}, Policy: "llm-monthly-" + s, Scope: "workload=llm",
			Period: "month", PeriodStart: time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC),
			Basis: "actual", Threshold: "80%", Spend: 40000 + float64(n), Limit: 50000, Currency: "USD"},
		&events.CostAnomaly{Meta: events.Meta{At: at}, Anomaly: "llm-od-1", State: []string{"open", "update", "closed"}[n%3],
			Series: "workload=llm,location=aws-use1,gpu_model=H100-80GB,market=on_demand",
			Cause:  "workload=llm,location=aws-use1,gpu_model=H100-80GB,market=on_demand|market=on_demand",
			Start:  at.Add(-15 * time.Minute), Expected: 31.4, Observed: 98.3 + float64(n), Impact: 16.7,
			Currency: "USD", Moved: []string{"market=on_demand"}},
		&events.JobProgress{Meta: events.Meta{At: at}, Job: "finetune", WorkDoneS: 3600 * float64(n),
			CheckpointAt: ptr(at.Add(-time.Minute)), Location: "aws-use1", Market: events.Spot},
		&events.JobState{Meta: events.Meta{At: at}, Job: "finetune", Team: "research",
			State: events.JobRunning, WorkS: 48 * 3600, WorkDoneS: 3600 * float64(n),
			Deadline: at.Add(52 * time.Hour), OverheadS: 180, Location: "aws-use1", Market: events.Spot,
			GPUs: 8, USDPerHour: 31.4, OnDemandUSD: 98.32, USDSpent: 12.5 * float64(n), Preemptions: n,
			LostS: 180 * float64(n)},
	}
	for _, e := range all {
		events.Stamp(e)
	}
	return all
}

func ptr[T any](v T) *T { return &v }

// Sweep returns n GPU samples of one node at t, as the GPU collector reads them together. The
// values cycle every ten GPUs, so any n gives valid samples.
func Sweep(node string, n int, t time.Time) []events.Event {
	out := make([]events.Event, n)
	for i := range out {
		k := i % 10
		out[i] = events.Stamp(&events.GPUSample{Meta: events.Meta{At: t}, Location: "aws-use1", Node: node,
			UUID: fmt.Sprintf("GPU-%s-%d", node, i), Index: k, Model: "H100-80GB", UtilizationPct: float64(10 * k),
			MemoryUsedBytes: int64(k) << 30, MemoryTotalBytes: 80 << 30, PowerW: 300 + float64(k), TemperatureC: 50})
	}
	return out
}
