package alert

import (
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// step is one thing that happens to a tracker: an event, or time passing to now.
type step struct {
	e   events.Event
	now *time.Time
}

func ev(e events.Event) step { return step{e: events.Stamp(e)} }

func tick(d time.Duration) step { t := at(d); return step{now: &t} }

const (
	use1  = "aws-use1"
	usc1  = "gcp-usc1"
	spotA = "aws-use1/us-east-1a/p5.48xlarge/spot" // offer ids as the arbiter names them
	a3    = "gcp-usc1/us-central1-a/a3-highgpu-8g/spot"
	a3od  = "gcp-usc1/us-central1-a/a3-highgpu-8g/on_demand"
)

func running(workload, location, offer string, market events.Market, ready int, when time.Duration) events.Event {
	return &events.ReplicaState{Meta: events.Meta{At: at(when)}, Workload: workload, Location: location,
		Provider: "aws", Market: market, Offer: offer, GPUModel: "H100-80GB", GPUs: 8, USDPerHour: 31.4,
		Desired: ready, Ready: ready}
}

func reclaim(instance string, notice, deadline time.Duration) events.Event {
	return &events.CapacityReclaimed{Meta: events.Meta{At: at(notice)}, Provider: "aws", Region: "us-east-1",
		Location: use1, Zone: "us-east-1a", Instance: instance, Kind: events.ReclaimInterruption,
		NoticeAt: at(notice), Deadline: at(deadline), Source: "aws-imds"}
}

func decided(workload, id string, delta int, when time.Duration) events.Event {
	return &events.PlanDecided{Meta: events.Meta{At: at(when)}, Workload: workload, PlanID: "plan-" + id,
		Actions: []events.PlanAction{{ID: id, Kind: "launch", Location: usc1, Offer: a3, Market: events.Spot,
			Replicas: delta, Delta: delta, Reason: "reclaim"}}}
}

func action(workload, id, kind, reason, offer string, market events.Market, replicas int, st events.ActionStatus,
	when time.Duration) events.Event {
	return &events.ActionUpdated{Meta: events.Meta{At: at(when)}, Workload: workload, ActionID: id, PlanID: "plan-" + id,
		Status: st, Kind: kind, Location: locationOf(offer), Offer: offer, Market: market, Replicas: replicas, Reason: reason,
		Actor: "arbiter/a", Detail: detailOf(st)}
}

// locationOf reads the location from an offer id (location/instance/market).
func locationOf(offer string) string {
	loc, _, _ := strings.Cut(offer, "/")
	return loc
}

func detailOf(st events.ActionStatus) string {
	if st == events.ActionFailed {
		return "ZONE_RESOURCE_POOL_EXHAUSTED"
	}
	return ""
}

// launched is a replacement launch for workload that reached the actuator.
func launched(workload, id string, replicas int, when time.Duration) events.Event {
	return action(workload, id, "launch", "reclaim", a3, events.Spot, replicas, events.ActionApplied, when)
}

func failed(workload, id string, when time.Duration) events.Event {
	return action(workload, id, "launch", "demand_up", a3, events.Spot, 1, events.ActionFailed, when)
}

func price(source, provider string, when time.Duration) events.Event {
	return &events.PriceObserved{Meta: events.Meta{At: at(when)}, Provider: provider, Region: "us-east-1",
		InstanceType: "p5.48xlarge", GPUModel: "H100-80GB", GPUCount: 8, GPUMemoryGB: 640, Market: events.Spot,
		USDPerHour: 31.4, Source: source}
}

func gpu(location string, when time.Duration) events.Event {
	return &events.GPUSample{Meta: events.Meta{At: at(when)}, Location: location, Node: "node-1", UUID: "GPU-1",
		Model: "H100-80GB", UtilizationPct: 80, MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 80 << 30, PowerW: 600,
		TemperatureC: 60}
}

func tokens(location string, when time.Duration) events.Event {
	return &events.TokensSample{Meta: events.Meta{At: at(when)}, Location: location, Workload: "llm", Replica: "llm-0",
		Server: "vllm", PromptTokens: 10, GenerationTokens: 20, Requests: 1}
}
