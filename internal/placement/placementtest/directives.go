package placementtest

import (
	"fmt"

	"github.com/bursar-dev/bursar/internal/placement"
)

func (p *parser) policy(kv *kvs) error {
	pol := &p.sc.Policy
	pol.MinSavingPerHour = kv.num("min_saving")
	pol.PaybackHorizon = kv.dur("payback")
	pol.Cooldown = kv.dur("cooldown")
	pol.HazardHalfLife = kv.dur("hazard_half_life")
	pol.PriorHazardPerHour = kv.num("prior_hazard")
	pol.PriorExposure = kv.dur("prior_exposure")
	pol.CapacityHalfLife = kv.dur("capacity_half_life")
	pol.MinLaunchChance = kv.num("min_launch_chance")
	pol.HoldBonus = kv.num("hold_bonus")
	pol.ReactionTime = kv.dur("reaction")
	pol.HedgeRisk = kv.num("hedge_risk")
	pol.MaxHedge = kv.int("max_hedge")
	pol.HazardCostWeight = kv.num("hazard_weight")
	pol.FallbackConfidence = kv.num("fallback_confidence")
	pol.DisableFallback = kv.str("fallback") == "off"
	return kv.done()
}

func (p *parser) location(id string, kv *kvs) error {
	p.sc.Snapshot.Locations = append(p.sc.Snapshot.Locations, placement.Location{
		ID: id, Provider: kv.str("provider"), Region: kv.str("region"), Zone: kv.str("zone"),
		FailureDomain: kv.str("domain"), Residency: kv.list("residency"),
		EgressPerGB: kv.num("egress"), Capacity: kv.int("capacity"),
	})
	return kv.done()
}

func (p *parser) offer(id string, kv *kvs) error {
	count := kv.int("count")
	if count == 0 {
		count = 1
	}
	p.sc.Snapshot.Offers = append(p.sc.Snapshot.Offers, placement.Offer{
		ID: id, Location: kv.str("location"), InstanceType: kv.str("type"), GPUModel: kv.str("gpu"),
		GPUCount: count, GPUMemoryGB: kv.num("mem"), Market: placement.Market(kv.str("market")),
		PricePerHour: kv.num("price"), Capacity: kv.int("capacity"), Availability: kv.num("availability"),
	})
	return kv.done()
}

// history reads "history OFFER KIND at=T [count=N] [lived=D]".
func (p *parser) history(offer string, rest []string) error {
	if len(rest) == 0 {
		return fmt.Errorf("history %s needs a kind (launch_failed, preempted, launched, ended)", offer)
	}
	kind := placement.ObservationKind(rest[0])
	switch kind {
	case placement.ObsLaunchFailed, placement.ObsPreempted, placement.ObsLaunched, placement.ObsEnded:
	default:
		return fmt.Errorf("unknown observation kind %q (want launch_failed, preempted, launched or ended)", rest[0])
	}
	kv, _ := pairs(rest[1:])
	ob := placement.Observation{At: kv.at("at", p.sc.Now), Kind: kind, Count: kv.int("count"), Lived: kv.dur("lived")}
	if err := kv.done(); err != nil {
		return err
	}
	for i := range p.sc.Snapshot.Offers {
		if o := &p.sc.Snapshot.Offers[i]; o.ID == offer {
			o.History = append(o.History, ob)
			return nil
		}
	}
	return fmt.Errorf("history for offer %q, which no earlier offer line declares", offer)
}

func (p *parser) workload(id string, kv *kvs) error {
	var markets []placement.Market
	for _, m := range kv.list("markets") {
		markets = append(markets, placement.Market(m))
	}
	p.sc.Snapshot.Workloads = append(p.sc.Snapshot.Workloads, placement.Workload{
		ID: id, Team: kv.str("team"), GPUModels: kv.list("gpus"), MinGPUMemoryGB: kv.num("min_mem"),
		GPUsPerReplica: kv.int("per_replica"), MinReplicas: kv.int("min"), MaxReplicas: kv.int("max"),
		MinLocations: kv.int("locations"), Markets: markets, Residency: kv.list("residency"),
		WeightsGB: kv.num("weights"), ColdStart: kv.dur("cold"), Demand: kv.int("demand"),
		LastMoveAt: kv.at("last_move", p.sc.Now), Throughput: kv.rates("rates"),
		DemandRate: kv.num("rate"), RateUnit: kv.str("unit"),
	})
	return kv.done()
}

func (p *parser) replica(id string, kv *kvs) error {
	p.sc.Snapshot.Replicas = append(p.sc.Snapshot.Replicas, placement.Replica{
		ID: id, Workload: kv.str("workload"), Offer: kv.str("offer"),
		State: placement.ReplicaState(kv.str("state")), Since: kv.at("since", p.sc.Now),
		Deadline: kv.at("deadline", p.sc.Now),
	})
	return kv.done()
}

func (p *parser) budget(name string, kv *kvs) error {
	p.sc.Snapshot.Budgets = append(p.sc.Snapshot.Budgets, placement.Budget{
		Name: name, MaxPerHour: kv.num("max"),
		Scope: placement.Scope{Workload: kv.str("workload"), Team: kv.str("team"),
			Provider: kv.str("provider"), Location: kv.str("location")},
	})
	return kv.done()
}
