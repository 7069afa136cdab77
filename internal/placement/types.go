// Package placement is Bursar's planner: given where GPU capacity is, what it costs, how likely it
// is to be reclaimed and what each workload needs, it decides how many replicas run where and on
// which market. A workload asks for replicas, or for a rate (tokens/s) with what one replica
// serves on each GPU model it accepts; the planner then also chooses the count and the mix of
// models, cheapest per unit served (rateselect.go).
//
// The package is a pure core. Plan takes a Snapshot, a Policy and the time as values and returns a
// Plan; it does no I/O, reads no clock and uses no hidden randomness, so the same inputs always
// give the same plan (action ids included). Everything the planner learns from the past, such as
// failed launches and preemptions, travels in the Snapshot as Observations, and the planner turns
// them into estimates (preemption hazard, chance a launch finds capacity) on every call.
package placement

import "time"

// Market is how an offer is sold.
type Market string

// The markets an offer can be sold on. Only spot capacity is assumed reclaimable.
const (
	MarketSpot     Market = "spot"
	MarketOnDemand Market = "on_demand"
	MarketReserved Market = "reserved"
)

// Location is a place capacity lives: one zone of one provider's region, or a rack of one's own.
type Location struct {
	ID       string
	Provider string
	Region   string
	Zone     string
	// FailureDomain groups locations that fail together (a zone, a power domain); empty means
	// the location is a domain of its own (its ID).
	FailureDomain string
	// Residency lists the tags this location satisfies (for example "eu", "us", "gdpr").
	Residency []string
	// EgressPerGB is the price in USD of moving one GB out of this location; it prices the weights
	// a move must copy from here.
	EgressPerGB float64
	// Capacity is a hint of how many more instances the location can hold across all its offers;
	// 0 means unknown (no limit assumed).
	Capacity int
}

// Offer is one thing that can be bought: an instance type with some GPUs, at a location, on a
// market, at a price.
type Offer struct {
	ID           string
	Location     string
	InstanceType string
	GPUModel     string // normalized, e.g. "H100-80GB"
	GPUCount     int    // GPUs per instance; one replica runs on one instance
	GPUMemoryGB  float64
	Market       Market
	PricePerHour float64 // USD per instance-hour
	// Capacity is a hint of how many more instances of this offer can be launched now; 0 means
	// unknown (no limit assumed beyond what History says).
	Capacity int
	// Availability is the share of recent launch attempts that found capacity, as reported by the
	// caller, in [0,1]; 0 means not reported. History, when present, is the planner's own source.
	Availability float64
	// History is what was observed on this offer: failed launches, preemptions and launches that
	// succeeded. The planner estimates the offer's preemption hazard and the chance a launch finds
	// capacity from it (see Policy for the decay and priors). Order does not matter.
	History []Observation
}

// ObservationKind says what happened to an offer.
type ObservationKind string

// The facts the planner learns from.
const (
	// ObsLaunchFailed: a launch found no capacity (insufficient capacity, or the instance vanished
	// at once).
	ObsLaunchFailed ObservationKind = "launch_failed"
	// ObsPreempted: a running or launching instance was reclaimed; Lived says how long it lived.
	ObsPreempted ObservationKind = "preempted"
	// ObsLaunched: a launch got capacity.
	ObsLaunched ObservationKind = "launched"
	// ObsEnded: an instance ended by our own choice (drained) after living Lived; it adds survival
	// time to the hazard estimate.
	ObsEnded ObservationKind = "ended"
)

// Observation is one fact about an offer at a time.
type Observation struct {
	At    time.Time
	Kind  ObservationKind
	Count int           // instances concerned; 0 means 1
	Lived time.Duration // for preempted and ended: how long the instance had lived
}

// Workload is something that needs replicas: an inference service, a training job.
type Workload struct {
	ID   string
	Team string
	// GPUModels are the accepted GPU models; empty means any model with at least MinGPUMemoryGB
	// per GPU.
	GPUModels      []string
	MinGPUMemoryGB float64
	GPUsPerReplica int // an offer qualifies when it has at least this many GPUs; 0 means 1
	MinReplicas    int // ready replicas never planned below this (a budget cut needs approval)
	MaxReplicas    int // 0 means no upper bound beyond demand and hedging
	MinLocations   int // distinct locations the replicas must span
	// Markets lists the markets allowed; empty means all.
	Markets []Market
	// Residency lists tags of which a location must carry at least one; empty means anywhere.
	Residency []string
	WeightsGB float64       // copied on a move; priced at the source's egress rate
	ColdStart time.Duration // launch to ready
	// Demand is how many ready replicas the traffic needs now (from telemetry); the planner aims
	// for max(Demand, MinReplicas), capped by MaxReplicas. It is ignored when Throughput is set.
	Demand int
	// Throughput is what one replica serves at the workload's latency target, by GPU model, in
	// the workload's demand unit (output tokens/s, requests/s). When it is set the workload is
	// planned by rate: the planner covers DemandRate with the mix of models, locations and markets
	// that is cheapest per unit served, at least MinReplicas (and MinLocations) replicas and at
	// most MaxReplicas; an offer whose model has no positive rate here does not qualify. Empty
	// means the workload is planned in replicas (Demand).
	Throughput map[string]float64
	// DemandRate is the rate the traffic needs now, in Throughput's unit; used only with
	// Throughput.
	DemandRate float64
	// RateUnit names Throughput's unit in the planner's explanations ("tokens/s"); empty reads
	// "units/s".
	RateUnit string
	// AvailabilityTarget is the percent of minutes the workload must have enough ready capacity
	// (99.9); the hedge and the fallback then buy the cheapest spare that keeps the risk of being
	// short within it (target.go). 0 means none: the policy's HedgeRisk and FallbackConfidence.
	AvailabilityTarget float64
	// LastMoveAt is when the planner last moved this workload for price; moves wait Policy.Cooldown
	// after it. The zero time means never.
	LastMoveAt time.Time
}

// ReplicaState is where a replica is in its life.
type ReplicaState string

// The replica states the planner understands.
const (
	StateLaunching ReplicaState = "launching"
	StateReady     ReplicaState = "ready"
	StateDraining  ReplicaState = "draining"
	StateReclaimed ReplicaState = "reclaimed" // notice received; gone at Deadline
)

// Replica is one running (or starting, or leaving) copy of a workload.
type Replica struct {
	ID       string
	Workload string
	Offer    string
	State    ReplicaState
	Since    time.Time // when it was launched
	Deadline time.Time // for reclaimed: when the provider takes it
}

// Scope selects what a budget cap covers; empty fields match everything, so a zero Scope covers
// the whole estate.
type Scope struct {
	Workload string
	Team     string
	Provider string
	Location string
}

// Budget caps the spend per hour of a scope.
type Budget struct {
	Name       string
	Scope      Scope
	MaxPerHour float64 // USD per hour
}

// Snapshot is everything the planner sees at one instant.
type Snapshot struct {
	Locations []Location
	Offers    []Offer
	Workloads []Workload
	Replicas  []Replica
	Budgets   []Budget
	// Seed is mixed into action ids, so that two planners (say, two partitions) never issue the
	// same id for different actions. The planner itself needs no randomness: exact ties break by
	// id, and the same snapshot gives the same plan whatever the order of its lists.
	Seed uint64
}
