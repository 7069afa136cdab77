package demo

// servedStat is how one workload's demand met its ready capacity over the replay, a minute at a
// time, as ../shared/SERVING.md measures a serving policy: ready capacity is the sum of the ready
// replicas' rates for their GPU models, in the workload's scaling metric.
type servedStat struct {
	minutes int     // minutes replayed
	enough  int     // of them, minutes with ready capacity ≥ demand
	demand  float64 // Σ demand per second over the minutes
	served  float64 // Σ what was served per second
}

// add counts one minute of demand against the ready capacity and returns the share of the
// demand served: all of it while demand is within headroom times the capacity, since a replica
// can run above the rate it keeps its latency target at, and that share of it beyond.
func (s *servedStat) add(demand, capacity float64) float64 {
	s.minutes++
	if capacity >= demand {
		s.enough++
	}
	if demand <= 0 {
		return 0
	}
	frac := min(1, headroom*capacity/demand)
	s.demand += demand
	s.served += frac * demand
	return frac
}

// enoughPct is the percent of minutes with enough capacity.
func (s servedStat) enoughPct() float64 {
	return pct(float64(s.enough), float64(s.minutes))
}

// unservedPct is the percent of the demand the ready replicas did not serve.
func (s servedStat) unservedPct() float64 {
	return pct(s.demand-s.served, s.demand)
}
