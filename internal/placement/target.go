package placement

// A workload's availability target (Workload.AvailabilityTarget) is the share of minutes it must
// have enough ready capacity. The planner turns it into the two risks its hedge and fallback
// bound, in place of the policy's fixed HedgeRisk and FallbackConfidence, so that a workload that
// asks for 99.9 holds more spare (or more on-demand) than one that asks for 99, on any market:
// the rules below use only the target, the workload's loss window and the planner's reaction
// time, with the hazards and launch chances the planner estimates from each offer's own history.
//
// The budget is the share of minutes the workload may be short: b = 1 − target/100. The share of
// minutes short is the rate at which shortages start times how long each lasts. These start or
// lengthen one, and the minutes they cost add up, so each gets an equal part of the budget:
//
//   - A loss the spare does not cover (the hedge's risk). It leaves the set short from the loss
//     until a replacement is ready: the reaction plus the cold start, which is the loss window W.
//     If P is the chance such a loss starts within a window of W, losses start at about P/W per
//     unit of time and each costs W, so they cost a share P of the minutes: the hedge holds
//     spares until P is within its part.
//   - A launch that finds no capacity (the fallback's risk). It is seen and replaced one reaction
//     R later, so it lengthens the shortage it was meant to end by R. The set needs launches to
//     end a shortage at most once per W (a shortage lasts a loss window), so with q the chance its
//     launches do not cover the need, failed launches cost a share of at most q·R/W: the fallback
//     adds launches until q is within its part times W/R.
//   - For a workload planned by rate, demand above what it was sized for. That is the caller's to
//     cover (DemandShare, Forecaster.ExpectWithin): its DemandRate holds the headroom.
//
// Without a target the policy's constants apply, unchanged.

// shortBudget is the share of minutes w may be short, and whether w states a target at all.
// A target of 100 (or more) leaves no budget: every risk the planner can buy away is bought.
func shortBudget(w *Workload) (float64, bool) {
	a := w.AvailabilityTarget
	if !(a > 0) {
		return 0, false
	}
	return max(0, 1-a/100), true
}

// budgetParts is how many causes of shortage w's budget is split between (see above).
func budgetParts(w *Workload) float64 {
	if rated(w) {
		return 3
	}
	return 2
}

// hedgeRisk is the chance of a loss the spare does not cover, within the loss window, that the
// hedge accepts: its part of the target's budget, or Policy.HedgeRisk without a target.
func (s *selection) hedgeRisk() float64 {
	b, ok := shortBudget(s.w)
	if !ok {
		return s.wp.p.HedgeRisk
	}
	return b / budgetParts(s.w)
}

// fallbackConfidence is how likely the set's launches must be to cover its need: one less the
// fallback's part of the budget times the reactions that fit in the loss window, or
// Policy.FallbackConfidence without a target.
func (s *selection) fallbackConfidence() float64 {
	b, ok := shortBudget(s.w)
	if !ok {
		return s.wp.p.FallbackConfidence
	}
	r := s.wp.p.ReactionTime // never 0: withDefaults fills it
	return max(0, 1-b/budgetParts(s.w)*float64(max(s.window, r))/float64(r))
}

// DemandShare is the share of minutes a workload planned by rate with an availability target
// (percent) may be short because demand rose above what it was sized for: its part of the
// budget, as the planner splits it. 0 without a target (0 or less).
func DemandShare(target float64) float64 {
	w := Workload{AvailabilityTarget: target, Throughput: map[string]float64{"": 1}}
	b, ok := shortBudget(&w)
	if !ok {
		return 0
	}
	return b / budgetParts(&w)
}

// ExpectWithin is Expect with the headroom sized so that demand exceeds it in at most share of
// the recent forecasts at the horizon (share 0.1 is Expect's own headroom). A share of 0 or less
// covers the worst recent under-forecast, still at most ForecastMaxHeadroom.
func (f *Forecaster) ExpectWithin(share float64) float64 {
	return max(f.last, f.Peak()*(1+f.headroomAt(1-share)))
}
