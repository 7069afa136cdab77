package serving

import "math"

// Score is one policy's figures on one window, over the scored ticks ColdStart..T-1 (before
// ColdStart nothing can be ready, for any policy; REPLAY.md scores the same ticks).
type Score struct {
	CostUSD                 float64            `json:"cost_usd"`
	ServedMillionTokens     float64            `json:"served_million_tokens"`
	CostUSDPerMillionTokens float64            `json:"cost_usd_per_million_tokens"`
	CapacityAvailabilityPct float64            `json:"capacity_availability_pct"`
	UnservedTokensPct       float64            `json:"unserved_tokens_pct"`
	SpotSharePct            float64            `json:"spot_share_pct"`
	MovesPerHour            float64            `json:"moves_per_hour"`
	GPUHoursByType          map[string]float64 `json:"gpu_hours_by_type"`
	ForecastMAPEPct         float64            `json:"forecast_mape_pct,omitempty"`
	CostPctOfODAutoscale    float64            `json:"cost_pct_of_od_autoscale"`
	// OptimalityGapPct, for a policy that bounds the optimum (Bounded), is how much dearer its
	// schedule is than that lower bound, in percent of the schedule; ProvenOptimal says the gap is 0
	// because the schedule was solved exactly.
	OptimalityGapPct float64 `json:"optimality_gap_pct,omitempty"`
	ProvenOptimal    bool    `json:"proven_optimal,omitempty"`
}

// tickHours is one 60 s tick in hours.
const tickHours = 1.0 / 60

// Measure scores a schedule against its window:
//   - capacity is Σ ready × the source's rate; a tick is available when capacity >= demand;
//   - served tokens are Σ min(demand, capacity) × 60; unserved is the rest of the demand;
//   - cost is Σ held (launching included) × price per hour / 60;
//   - spot share is the share of held replica-hours on spot sources;
//   - moves per hour counts replicas started (launches that got capacity) per scored hour: a move
//     from one source to another is a release, which is free, and a launch.
func Measure(w *Window, s Schedule) Score {
	sc := Score{GPUHoursByType: map[string]float64{}}
	var demand, unserved, replicaHours, spotHours float64
	var ok, ticks, launches int
	for t := w.ColdStart; t < len(w.Demand); t++ {
		ticks++
		capacity := 0.0
		for i, src := range w.Sources {
			held := float64(s.Held[t][i])
			capacity += float64(s.Ready[t][i]) * src.Rate
			sc.CostUSD += held * src.USDPerHour * tickHours
			sc.GPUHoursByType[src.Type] += held * float64(src.GPUs) * tickHours
			replicaHours += held * tickHours
			if src.Spot {
				spotHours += held * tickHours
			}
			launches += s.Launched[t][i]
		}
		d := w.Demand[t]
		demand += d * 60
		if capacity >= d {
			ok++
		}
		served := math.Min(d, capacity) * 60
		unserved += d*60 - served
		sc.ServedMillionTokens += served / 1e6
	}
	sc.CapacityAvailabilityPct = pct(float64(ok), float64(ticks))
	sc.UnservedTokensPct = pct(unserved, demand)
	sc.SpotSharePct = pct(spotHours, replicaHours)
	if ticks > 0 {
		sc.MovesPerHour = float64(launches) / (float64(ticks) * tickHours)
	}
	if sc.ServedMillionTokens > 0 {
		sc.CostUSDPerMillionTokens = sc.CostUSD / sc.ServedMillionTokens
	}
	return sc
}

// pct is part/whole in percent, 0 when whole is 0 (no demand: nothing unserved).
func pct(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * part / whole
}
