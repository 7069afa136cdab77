package placement

import (
	"cmp"
	"slices"
	"time"
)

// offerInfo is an offer with everything the planner derives from it once per snapshot.
type offerInfo struct {
	o      *Offer
	loc    *Location
	model  int    // the GPU model's position in index.models
	domain string // failure domain and instance type: spot replicas spread over these
	risk   offerRisk
	// rank orders offers in the index: price inflated by the risk of preemption over a reference
	// window and divided by the chance a launch succeeds.
	rank float64
	// free is how many more instances the offer can take (capacity hint less what the plan has
	// launched so far); negative means no limit.
	free int
}

// index groups offers by GPU model, each group sorted once by rank, so that a workload's
// candidates are the first few eligible entries of its models' lists rather than a scan of all
// offers.
type index struct {
	offers  []offerInfo
	byID    map[string]int
	locs    map[string]*Location
	byModel map[string][]int32
	all     []int32
	// models are the GPU models on offer; a workload planned by rate looks its rates up by
	// position (rateTable) rather than by name in its map on every option it weighs.
	models  []string
	modelID map[string]int
	// locFree is the capacity hint left per location; absent means no limit.
	locFree map[string]int
	// market is the spot market's pooled hazard, the prior of every spot offer's estimate.
	market float64
}

// refWindow is the loss window used to rank offers in the index before a workload's own cold start
// is known.
const refWindow = 150 * time.Second

func buildIndex(s *Snapshot, p *Policy, now time.Time) *index {
	ix := &index{
		offers:  make([]offerInfo, len(s.Offers)),
		byID:    make(map[string]int, len(s.Offers)),
		locs:    make(map[string]*Location, len(s.Locations)),
		byModel: make(map[string][]int32),
		locFree: make(map[string]int),
		modelID: make(map[string]int),
	}
	for i := range s.Locations {
		l := &s.Locations[i]
		ix.locs[l.ID] = l
		if l.Capacity > 0 {
			ix.locFree[l.ID] = l.Capacity
		}
	}
	for i := range s.Offers {
		ix.byID[s.Offers[i].ID] = i
	}
	running := runningSince(s, ix.byID)
	ev := make([]evidence, len(s.Offers))
	for i := range s.Offers {
		ev[i] = gather(&s.Offers[i], running[i], p, now)
	}
	ix.market = marketHazard(ev, s.Offers, p)
	for i := range s.Offers {
		o := &s.Offers[i]
		oi := &ix.offers[i]
		oi.o = o
		oi.loc = ix.locs[o.Location]
		oi.domain = domainOf(oi.loc, o)
		id, ok := ix.modelID[o.GPUModel]
		if !ok {
			id = len(ix.models)
			ix.modelID[o.GPUModel] = id
			ix.models = append(ix.models, o.GPUModel)
		}
		oi.model = id
		oi.risk = estimateRisk(o, ev[i], ix.market, p)
		oi.rank = rankOf(o.PricePerHour, oi.risk, refWindow, p)
		oi.free = -1
		if o.Capacity > 0 {
			oi.free = o.Capacity
		}
		ix.byModel[o.GPUModel] = append(ix.byModel[o.GPUModel], int32(i))
		ix.all = append(ix.all, int32(i))
	}
	byRank := func(a, b int32) int {
		return cmp.Or(cmp.Compare(ix.offers[a].rank, ix.offers[b].rank),
			cmp.Compare(ix.offers[a].o.ID, ix.offers[b].o.ID))
	}
	for _, l := range ix.byModel {
		slices.SortFunc(l, byRank)
	}
	slices.SortFunc(ix.all, byRank)
	return ix
}

// runningSince lists, per offer, the launch times of the live replicas on it. The lists share one
// backing array, so an estate of many replicas costs two allocations, not one per offer.
func runningSince(s *Snapshot, byID map[string]int) [][]time.Time {
	out := make([][]time.Time, len(s.Offers))
	at := make([]int32, len(s.Replicas)) // offer of each live replica, -1 otherwise
	count := make([]int, len(s.Offers))
	for ri, r := range s.Replicas {
		at[ri] = -1
		if r.State != StateLaunching && r.State != StateReady {
			continue
		}
		if i, ok := byID[r.Offer]; ok {
			at[ri] = int32(i)
			count[i]++
		}
	}
	flat := make([]time.Time, 0, len(s.Replicas))
	for i, n := range count {
		out[i] = flat[len(flat) : len(flat) : len(flat)+n]
		flat = flat[:len(flat)+n]
	}
	for ri, i := range at {
		if i >= 0 {
			out[i] = append(out[i], s.Replicas[ri].Since)
		}
	}
	return out
}

func domainOf(l *Location, o *Offer) string {
	d := o.Location
	if l != nil && l.FailureDomain != "" {
		d = l.FailureDomain
	} else if l != nil && l.Zone != "" {
		d = l.Zone
	}
	return d + "/" + o.InstanceType
}

// rankOf is an offer's effective price for a new launch: the price, plus the expected cost of
// losing the replica within window (paid again as a new cold start), divided by the chance the
// launch finds capacity.
func rankOf(price float64, r offerRisk, window time.Duration, p *Policy) float64 {
	eff := price * (1 + p.HazardCostWeight*r.hazard*window.Hours())
	if r.launchChance <= 0 {
		return eff * 1e6
	}
	return eff / r.launchChance
}

// eligible says whether offer i can host a replica of w.
func (ix *index) eligible(i int, w *Workload) bool {
	oi := &ix.offers[i]
	o := oi.o
	if o.GPUCount < max(w.GPUsPerReplica, 1) {
		return false
	}
	if len(w.GPUModels) > 0 {
		if !slices.Contains(w.GPUModels, o.GPUModel) {
			return false
		}
	} else if o.GPUMemoryGB < w.MinGPUMemoryGB {
		return false
	}
	if len(w.Markets) > 0 && !slices.Contains(w.Markets, o.Market) {
		return false
	}
	if rated(w) && modelRate(w, o.GPUModel) == 0 {
		return false
	}
	return residencyOK(oi.loc, w)
}

func residencyOK(l *Location, w *Workload) bool {
	if len(w.Residency) == 0 {
		return true
	}
	if l == nil {
		return false
	}
	for _, t := range w.Residency {
		if slices.Contains(l.Residency, t) {
			return true
		}
	}
	return false
}

// hasRoom says whether offer i can take one more instance under its own and its location's hints.
func (ix *index) hasRoom(i int) bool {
	oi := &ix.offers[i]
	if oi.free == 0 {
		return false
	}
	if f, ok := ix.locFree[oi.o.Location]; ok && f <= 0 {
		return false
	}
	return true
}

// take books n instances of offer i (negative n gives them back).
func (ix *index) take(i, n int) {
	oi := &ix.offers[i]
	if oi.free >= 0 {
		oi.free -= n
	}
	if f, ok := ix.locFree[oi.o.Location]; ok {
		ix.locFree[oi.o.Location] = f - n
	}
}

// candidates appends to dst the offers w may launch on, best rank first, stopping after limit
// offers with room (offers without room are skipped, not counted). Spot offers whose launch chance
// is under the policy's floor are left out.
//
// A workload planned by rate looks only at the models it has a rate for, and its candidates are
// ordered by rank per unit of its rate, so the list keeps the offers cheapest per unit served.
func (ix *index) candidates(dst []int32, w *Workload, limit int, p *Policy) []int32 {
	lists := [][]int32{ix.all}
	switch {
	case len(w.GPUModels) > 0:
		lists = lists[:0]
		for _, m := range w.GPUModels {
			if l, ok := ix.byModel[m]; ok {
				lists = append(lists, l)
			}
		}
	case rated(w):
		lists = lists[:0]
		for m := range w.Throughput { // the merged list is sorted below: map order does not matter
			if l, ok := ix.byModel[m]; ok {
				lists = append(lists, l)
			}
		}
	}
	start := len(dst)
	for _, l := range lists {
		n := 0
		for _, i := range l {
			if n >= limit {
				break
			}
			oi := &ix.offers[i]
			if oi.o.Market == MarketSpot && oi.risk.launchChance < p.MinLaunchChance {
				continue
			}
			if !ix.hasRoom(int(i)) || !ix.eligible(int(i), w) {
				continue
			}
			dst = append(dst, i)
			n++
		}
	}
	if len(lists) > 1 || rated(w) {
		key := func(i int32) float64 { return ix.offers[i].rank }
		if rated(w) {
			rates := ix.rateTable(nil, w)
			key = func(i int32) float64 { return ix.offers[i].rank / rates[ix.offers[i].model] }
		}
		slices.SortFunc(dst[start:], func(a, b int32) int {
			return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(ix.offers[a].o.ID, ix.offers[b].o.ID))
		})
		if len(dst)-start > limit {
			dst = dst[:start+limit]
		}
	}
	return dst
}

// rateTable appends to dst what one replica of w serves on each model of the index, by position
// (0 where w has no usable rate).
func (ix *index) rateTable(dst []float64, w *Workload) []float64 {
	for _, m := range ix.models {
		dst = append(dst, modelRate(w, m))
	}
	return dst
}
