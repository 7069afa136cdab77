package placement

import (
	"fmt"
	"slices"
)

// matches says whether a replica of w on offer oi falls in the scope.
func (pl *Planner) matches(sc Scope, w *Workload, oi int) bool {
	if sc.Workload != "" && sc.Workload != w.ID {
		return false
	}
	if sc.Team != "" && sc.Team != w.Team {
		return false
	}
	if sc.Location != "" && (oi < 0 || pl.s.Offers[oi].Location != sc.Location) {
		return false
	}
	if sc.Provider != "" {
		if oi < 0 {
			return false
		}
		l := pl.ix.offers[oi].loc
		if l == nil || l.Provider != sc.Provider {
			return false
		}
	}
	return true
}

// replicaOffer is the offer index a replica runs on, -1 when unknown.
func (pl *Planner) replicaOffer(ri int) int {
	if i, ok := pl.ix.byID[pl.s.Replicas[ri].Offer]; ok {
		return i
	}
	return -1
}

// scopeCost is the planned spend per hour inside a scope.
func (pl *Planner) scopeCost(sc Scope) float64 {
	c := 0.0
	for _, wi := range pl.order {
		c += pl.workloadScopeCost(sc, pl.plans[wi])
	}
	return c
}

func (pl *Planner) workloadScopeCost(sc Scope, wpl *wplan) float64 {
	c := 0.0
	for _, sl := range wpl.desired {
		if pl.matches(sc, wpl.w, sl.offer) {
			c += pl.s.Offers[sl.offer].PricePerHour
		}
	}
	for _, ri := range wpl.kept {
		if oi := pl.replicaOffer(ri); oi >= 0 && pl.matches(sc, wpl.w, oi) {
			c += pl.s.Offers[oi].PricePerHour
		}
	}
	return c
}

// applyBudgets keeps each budget's scope under its cap. It trims in order of least harm: hedges,
// then replicas above the minimum, most expensive first. A cut
// below a workload's minimum is never made: it becomes a scale action that needs approval.
func (pl *Planner) applyBudgets() { pl.applyBudgetsTo(pl.order) }

// applyBudgetsTo enforces the budgets by trimming only the given workloads (all of them for a
// full plan, the re-planned ones for an incremental one).
func (pl *Planner) applyBudgetsTo(order []int) {
	budgets := slices.Clone(pl.s.Budgets)
	slices.SortFunc(budgets, func(a, b Budget) int { return compareStrings(a.Name, b.Name) })
	for _, b := range budgets {
		if b.MaxPerHour < 0 { // a negative cap is no cap
			continue
		}
		over := pl.scopeCost(b.Scope) - b.MaxPerHour
		for _, step := range []func(*wplan, Scope, float64) float64{pl.trimHedges, pl.trimToMinimum} {
			if over <= 1e-9 {
				break
			}
			for _, wi := range order {
				if over <= 1e-9 {
					break
				}
				over -= step(pl.plans[wi], b.Scope, over)
			}
		}
		if over > 1e-9 {
			pl.askApproval(b, over, order)
		}
	}
}

// trimSlots removes slots of wpl in scope that pick says may go, most expensive first, until over
// is covered; it returns the spend per hour saved and settles the surplus with reason budget.
func (pl *Planner) trimSlots(wpl *wplan, sc Scope, over float64, pick func(slot) bool, floor int) float64 {
	saved := 0.0
	for saved < over && len(wpl.desired) > floor {
		best := -1
		for i, sl := range wpl.desired {
			if !pick(sl) || !pl.matches(sc, wpl.w, sl.offer) {
				continue
			}
			if best < 0 || pl.s.Offers[sl.offer].PricePerHour > pl.s.Offers[wpl.desired[best].offer].PricePerHour {
				best = i
			}
		}
		if best < 0 {
			break
		}
		sl := wpl.desired[best]
		if sl.replica < 0 {
			pl.ix.take(sl.offer, -1)
		}
		wpl.desired = slices.Delete(wpl.desired, best, best+1)
		saved += pl.s.Offers[sl.offer].PricePerHour
	}
	if saved > 0 {
		before := pl.workloadScopeCost(sc, wpl)
		wpl.need = min(wpl.need, len(wpl.desired))
		if wpl.rated { // what the trimmed set serves is the need the surplus is settled against
			wpl.needRate = min(wpl.needRate, pl.desiredRate(wpl))
			wpl.minCount = min(wpl.minCount, len(wpl.desired))
		}
		pl.wp.settleSurplus(wpl, wpl.invalid, ReasonBudget)
		saved += before - pl.workloadScopeCost(sc, wpl) // surplus kept or drained changes too
	}
	return saved
}

func (pl *Planner) trimHedges(wpl *wplan, sc Scope, over float64) float64 {
	return pl.trimSlots(wpl, sc, over, func(sl slot) bool { return sl.reason == ReasonHedge }, 0)
}

func (pl *Planner) trimToMinimum(wpl *wplan, sc Scope, over float64) float64 {
	return pl.trimSlots(wpl, sc, over, func(slot) bool { return true }, max(wpl.w.MinReplicas, 0))
}

// askApproval emits, for workloads in the scope that still spend, the cut to their minimum or
// below that would bring the scope under its cap; a person must approve it.
func (pl *Planner) askApproval(b Budget, over float64, order []int) {
	for _, wi := range order {
		if over <= 1e-9 {
			return
		}
		wpl := pl.plans[wi]
		spend := pl.workloadScopeCost(b.Scope, wpl)
		if spend <= 0 {
			continue
		}
		n := len(wpl.desired)
		per := spend / float64(max(n, 1))
		cut := min(n, int(over/per)+1)
		if over/per == float64(int(over/per)) {
			cut = min(n, int(over/per))
		}
		over -= float64(cut) * per
		wpl.approvals = append(wpl.approvals, Action{Kind: ActionScale, Workload: wpl.w.ID,
			Count: n - cut, Reason: ReasonBudget, NeedsApproval: true, CostPerHour: -float64(cut) * per,
			Note: fmt.Sprintf("budget %q caps %.2f USD/h: cutting %d replicas goes below the minimum of %d",
				b.Name, b.MaxPerHour, cut, wpl.w.MinReplicas)})
	}
}

// desiredRate is what the desired set of a workload planned by rate serves.
func (pl *Planner) desiredRate(wpl *wplan) float64 {
	sum := 0.0
	for _, sl := range wpl.desired {
		sum += modelRate(wpl.w, pl.s.Offers[sl.offer].GPUModel)
	}
	return sum
}
