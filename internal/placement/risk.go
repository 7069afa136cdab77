package placement

import "time"

// Estimate is what the planner estimates of one offer: its preemption hazard (reclaims per
// instance-hour; 0 off spot) and the chance a launch there finds capacity now.
type Estimate struct {
	Offer        Offer
	Hazard       float64
	LaunchChance float64
	// Usable says the planner would try the offer at all (spot below Policy.MinLaunchChance is
	// not tried).
	Usable bool
}

// Estimates lists the offers of s that can host one replica of w, cheapest risk-adjusted first,
// with the estimates Plan makes of them, so that something placed beside the serving planner (a
// deadline-bound job) judges offers on the same evidence: the same history, market prior and
// launch chances.
func Estimates(s *Snapshot, w *Workload, p Policy, now time.Time) []Estimate {
	p = p.withDefaults()
	ix := buildIndex(s, &p, now)
	var out []Estimate
	for _, i := range ix.all {
		if !ix.eligible(int(i), w) {
			continue
		}
		oi := &ix.offers[i]
		out = append(out, Estimate{Offer: *oi.o, Hazard: oi.risk.hazard, LaunchChance: oi.risk.launchChance,
			Usable: oi.o.Market != MarketSpot || oi.risk.launchChance >= p.MinLaunchChance})
	}
	return out
}
