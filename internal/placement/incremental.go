package placement

import (
	"cmp"
	"slices"
	"time"
)

// Update is a change to a planned snapshot: replicas that are new or changed state (matched by
// id), and observations made on offers (a reclaim notice is both: the replica turns reclaimed and
// its offer records a preemption).
type Update struct {
	Replicas     []Replica
	Observations []OfferObservation
}

// OfferObservation is an observation on one offer.
type OfferObservation struct {
	Offer string
	Observation
}

// Apply folds u into the planner's snapshot and re-plans only the workloads it touches: the
// workloads of the changed replicas and those running on offers with new observations. It returns
// their actions (the rest of the plan stands as it was), with the estate's cost before and after
// brought up to date; Decision returns the whole plan again. Offers and workloads the update does
// not touch keep the estimates made at the time they were planned.
func (pl *Planner) Apply(u Update, now time.Time) Decision {
	pl.now, pl.wp.now = now, now
	dirtyOffers := map[int]bool{}
	affected := map[int]bool{}
	for _, r := range u.Replicas {
		pl.upsertReplica(r, dirtyOffers, affected)
	}
	for _, ob := range u.Observations {
		if i, ok := pl.ix.byID[ob.Offer]; ok {
			o := &pl.s.Offers[i]
			o.History = append(slices.Clip(o.History), ob.Observation) // never write into the caller's array
			dirtyOffers[i] = true
		}
	}
	if len(dirtyOffers) > 0 {
		pl.refreshOffers(dirtyOffers, affected)
	}
	order := make([]int, 0, len(affected))
	for wi := range affected {
		order = append(order, wi)
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(pl.lost(b)-pl.lost(a), compareStrings(pl.s.Workloads[a].ID, pl.s.Workloads[b].ID))
	})
	d := Decision{At: now, CostPerHourBefore: pl.dec.CostPerHourBefore, CostPerHourAfter: pl.dec.CostPerHourAfter}
	for _, wi := range order {
		old := pl.plans[wi]
		d.CostPerHourAfter -= pl.costAfter(old)
		for _, sl := range old.desired {
			if sl.replica < 0 {
				pl.ix.take(sl.offer, -1)
			}
		}
		w := &pl.s.Workloads[wi]
		pl.plans[wi] = pl.wp.plan(w, pl.reps[w.ID])
	}
	if len(pl.s.Budgets) > 0 && len(order) > 0 {
		pl.applyBudgetsTo(order)
	}
	for _, wi := range order {
		wpl := pl.plans[wi]
		d.CostPerHourAfter += pl.costAfter(wpl)
		d.Actions = pl.appendActions(d.Actions, wpl)
		if wpl.shortfall > 0 || wpl.why != "" {
			d.Shortfalls = append(d.Shortfalls, wpl.shortfallOf())
		}
	}
	d.CostPerHourBefore = pl.dec.CostPerHourBefore + pl.beforeDelta
	pl.beforeDelta = 0
	pl.dec.CostPerHourBefore, pl.dec.CostPerHourAfter = d.CostPerHourBefore, d.CostPerHourAfter
	pl.stale = true
	return d
}

// holds says whether a replica in state st is paid for now.
func holds(st ReplicaState) bool {
	return st == StateLaunching || st == StateReady || st == StateDraining || st == StateReclaimed
}

// upsertReplica replaces the replica with r's id, or adds r, and marks what it touches.
func (pl *Planner) upsertReplica(r Replica, dirtyOffers, affected map[int]bool) {
	if wi, ok := pl.wIdx[r.Workload]; ok {
		affected[wi] = true
	}
	if oi, ok := pl.ix.byID[r.Offer]; ok {
		dirtyOffers[oi] = true
	}
	if holds(r.State) {
		pl.beforeDelta += pl.price(r.Offer)
	}
	if i, ok := pl.rIdx[r.ID]; ok {
		old := pl.s.Replicas[i]
		if holds(old.State) {
			pl.beforeDelta -= pl.price(old.Offer)
		}
		if oi, ok := pl.ix.byID[old.Offer]; ok {
			dirtyOffers[oi] = true
		}
		if r.Workload == old.Workload {
			pl.s.Replicas[i] = r
			return
		}
		pl.reps[old.Workload] = slices.DeleteFunc(pl.reps[old.Workload], func(x int) bool { return x == i })
		if wi, ok := pl.wIdx[old.Workload]; ok {
			affected[wi] = true
		}
		pl.s.Replicas[i] = r
		pl.insertRep(r.Workload, i)
		return
	}
	pl.s.Replicas = append(slices.Clip(pl.s.Replicas), r)
	i := len(pl.s.Replicas) - 1
	pl.rIdx[r.ID] = i
	pl.insertRep(r.Workload, i)
}

// insertRep adds replica i to its workload's list, kept in id order.
func (pl *Planner) insertRep(workload string, i int) {
	reps := pl.reps[workload]
	at, _ := slices.BinarySearchFunc(reps, pl.s.Replicas[i].ID, func(x int, id string) int {
		return compareStrings(pl.s.Replicas[x].ID, id)
	})
	pl.reps[workload] = slices.Insert(reps, at, i)
}

// refreshOffers re-estimates the risk of the given offers, moves them to their new place in the
// index, and marks the workloads running on them.
func (pl *Planner) refreshOffers(dirty map[int]bool, affected map[int]bool) {
	running := map[int][]time.Time{}
	for ri := range pl.s.Replicas {
		r := &pl.s.Replicas[ri]
		oi, ok := pl.ix.byID[r.Offer]
		if !ok || !dirty[oi] {
			continue
		}
		if r.State == StateLaunching || r.State == StateReady {
			running[oi] = append(running[oi], r.Since)
		}
		if wi, ok := pl.wIdx[r.Workload]; ok {
			affected[wi] = true
		}
	}
	for oi := range dirty {
		info := &pl.ix.offers[oi]
		info.risk = estimateRisk(info.o, gather(info.o, running[oi], &pl.p, pl.now), pl.ix.market, &pl.p)
		info.rank = rankOf(info.o.PricePerHour, info.risk, refWindow, &pl.p)
		m := info.o.GPUModel
		pl.ix.byModel[m] = pl.ix.reposition(pl.ix.byModel[m], int32(oi))
		pl.ix.all = pl.ix.reposition(pl.ix.all, int32(oi))
	}
}

// reposition moves offer oi to its place in a rank-sorted list after its rank changed.
func (ix *index) reposition(list []int32, oi int32) []int32 {
	if at := slices.Index(list, oi); at >= 0 {
		list = slices.Delete(list, at, at+1)
	}
	at, _ := slices.BinarySearchFunc(list, oi, func(x, y int32) int {
		return cmp.Or(cmp.Compare(ix.offers[x].rank, ix.offers[y].rank), cmp.Compare(ix.offers[x].o.ID, ix.offers[y].o.ID))
	})
	return slices.Insert(list, at, oi)
}
