package placement

import "time"

// Policy holds the planner's knobs. The zero value is usable: every zero field takes the default
// documented on it (see DefaultPolicy). Fields whose zero value is meaningful are named so that
// zero is the default (DisableFallback, not Fallback).
type Policy struct {
	// MinSavingPerHour is the saving in USD per hour a move must make beyond paying back its own
	// cost; it keeps the planner from chasing cents. Default 0.05.
	MinSavingPerHour float64
	// PaybackHorizon is how long a move has to pay back its one-off cost (egress of the weights at
	// the source's rate plus the cold start at the current price). Default 6h.
	PaybackHorizon time.Duration
	// Cooldown is how long a workload waits after a price move before the next one, so it does not
	// flap between two offers. Default 30m.
	Cooldown time.Duration

	// HazardHalfLife is the half-life of the weight of a past observation in the preemption hazard
	// estimate: older preemptions count less, so the estimate follows the market. Default 2h.
	HazardHalfLife time.Duration
	// PriorHazardPerHour is the preemption hazard (per instance-hour) assumed for a spot market with
	// no history; PriorExposure is how much survival time that prior is worth, so a few real
	// observations outweigh it. Each spot offer's estimate starts from the market's pooled hazard
	// (this prior updated by every spot offer's history), also worth PriorExposure. Defaults 0.02
	// per hour and 1h.
	PriorHazardPerHour float64
	PriorExposure      time.Duration
	// CapacityHalfLife is the half-life of the evidence about an offer's capacity (launches that
	// failed or got capacity, preemptions, replicas running there): the chance a launch succeeds
	// is a Beta estimate over that decayed evidence, so it follows the market. Default 10m.
	CapacityHalfLife time.Duration
	// MinLaunchChance is the chance of finding capacity below which a spot offer is not tried at
	// all. Default 0.2.
	MinLaunchChance float64
	// HoldBonus is the extra chance of finding capacity credited to an offer that holds our
	// replicas now (capacity seen is capacity likely still there). Default 0.1.
	HoldBonus float64

	// ReactionTime is the time between a loss and the planner's reaction (the replay tick).
	// Together with the cold start it makes the window in which a loss cannot be covered by a new
	// launch. Default 30s.
	ReactionTime time.Duration
	// HedgeRisk is the chance, over that window, of losing a ready replica the workload needs above
	// which the planner holds an extra spot replica (hedge). Default 0.005: a loss uncovered for a
	// cold start costs minutes of availability, so even a small risk is worth a replica.
	HedgeRisk float64
	// MaxHedge caps the extra spot replicas per workload. Default 1; negative disables hedging.
	MaxHedge int
	// HazardCostWeight scales how much a spot offer's hazard adds to its effective price when
	// ranking offers: effective = price * (1 + weight * hazard * (cold start + reaction)) plus the
	// risk of failing to launch. Default 1.
	HazardCostWeight float64

	// FallbackConfidence is how sure the planner must be that pending spot launches will cover the
	// target within the cold start; below it the shortfall is covered with on-demand at once.
	// Default 0.95.
	FallbackConfidence float64
	// DisableFallback stops the planner from using on-demand (or reserved) capacity to stand in
	// for spot that is short.
	DisableFallback bool
}

// DefaultPolicy is the policy the planner uses for zero fields.
func DefaultPolicy() Policy {
	return Policy{
		MinSavingPerHour:   0.05,
		PaybackHorizon:     6 * time.Hour,
		Cooldown:           30 * time.Minute,
		HazardHalfLife:     2 * time.Hour,
		PriorHazardPerHour: 0.02,
		PriorExposure:      time.Hour,
		CapacityHalfLife:   10 * time.Minute,
		MinLaunchChance:    0.2,
		HoldBonus:          0.1,
		ReactionTime:       30 * time.Second,
		HedgeRisk:          0.005,
		MaxHedge:           1,
		HazardCostWeight:   1,
		FallbackConfidence: 0.95,
	}
}

// withDefaults fills zero fields from DefaultPolicy.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	setF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	setD := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	setF(&p.MinSavingPerHour, d.MinSavingPerHour)
	setD(&p.PaybackHorizon, d.PaybackHorizon)
	setD(&p.Cooldown, d.Cooldown)
	setD(&p.HazardHalfLife, d.HazardHalfLife)
	setF(&p.PriorHazardPerHour, d.PriorHazardPerHour)
	setD(&p.PriorExposure, d.PriorExposure)
	setD(&p.CapacityHalfLife, d.CapacityHalfLife)
	setF(&p.MinLaunchChance, d.MinLaunchChance)
	setF(&p.HoldBonus, d.HoldBonus)
	setD(&p.ReactionTime, d.ReactionTime)
	setF(&p.HedgeRisk, d.HedgeRisk)
	if p.MaxHedge == 0 {
		p.MaxHedge = d.MaxHedge
	}
	setF(&p.HazardCostWeight, d.HazardCostWeight)
	setF(&p.FallbackConfidence, d.FallbackConfidence)
	return p
}
