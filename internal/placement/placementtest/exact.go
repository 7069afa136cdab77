package placementtest

import (
	"math"
	"slices"

	"github.com/bursar-dev/bursar/internal/placement"
)

// Exact is the reference solver for small instances: it tries every way of placing n replicas of
// w on the snapshot's offers (no replicas running, no budgets) and returns the cheapest placement
// that keeps the planner's rules: the offer qualifies (GPU model or memory, GPU count, market,
// residency), capacity hints hold per offer and per location, the replicas span w.MinLocations
// locations, and two or more spot replicas span two failure domains (zone and instance type)
// when two are on offer. ok is false when no placement keeps them. It is exponential in the
// number of offers: tests and benchmarks only.
func Exact(s placement.Snapshot, w placement.Workload, n int) (cost float64, counts map[string]int, ok bool) {
	locs := map[string]placement.Location{}
	for _, l := range s.Locations {
		locs[l.ID] = l
	}
	var offers []placement.Offer
	for _, o := range s.Offers {
		if Qualifies(o, locs[o.Location], w) {
			offers = append(offers, o)
		}
	}
	spotDomains := map[string]bool{}
	for _, o := range offers {
		if o.Market == placement.MarketSpot {
			spotDomains[Domain(locs[o.Location], o)] = true
		}
	}
	e := exact{offers: offers, locs: locs, w: w, twoDomains: len(spotDomains) >= 2,
		best: math.Inf(1), cur: make([]int, len(offers))}
	e.search(0, n)
	if math.IsInf(e.best, 1) {
		return 0, nil, false
	}
	counts = map[string]int{}
	for i, c := range e.bestCounts {
		if c > 0 {
			counts[offers[i].ID] = c
		}
	}
	return e.best, counts, true
}

type exact struct {
	offers     []placement.Offer
	locs       map[string]placement.Location
	w          placement.Workload
	twoDomains bool
	cur        []int
	best       float64
	bestCounts []int
}

func (e *exact) search(i, left int) {
	if i == len(e.offers) {
		if left == 0 {
			e.consider()
		}
		return
	}
	limit := left
	if c := e.offers[i].Capacity; c > 0 {
		limit = min(limit, c)
	}
	for k := 0; k <= limit; k++ {
		e.cur[i] = k
		e.search(i+1, left-k)
	}
	e.cur[i] = 0
}

func (e *exact) consider() {
	cost := 0.0
	perLoc := map[string]int{}
	domains := map[string]bool{}
	spot := 0
	for i, k := range e.cur {
		if k == 0 {
			continue
		}
		o := e.offers[i]
		cost += float64(k) * o.PricePerHour
		perLoc[o.Location] += k
		if o.Market == placement.MarketSpot {
			spot += k
			domains[Domain(e.locs[o.Location], o)] = true
		}
	}
	for id, k := range perLoc {
		if c := e.locs[id].Capacity; c > 0 && k > c {
			return
		}
	}
	if len(perLoc) < e.w.MinLocations || (spot >= 2 && e.twoDomains && len(domains) < 2) {
		return
	}
	if cost < e.best-1e-12 {
		e.best = cost
		e.bestCounts = slices.Clone(e.cur)
	}
}

// Qualifies says whether offer o at location l can host a replica of w, by the planner's rules.
func Qualifies(o placement.Offer, l placement.Location, w placement.Workload) bool {
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
	if r := w.Throughput[o.GPUModel]; len(w.Throughput) > 0 && !(r > 0 && r < math.Inf(1)) {
		return false // a workload planned by rate runs only where it knows what a replica serves
	}
	if len(w.Residency) == 0 {
		return true
	}
	for _, t := range w.Residency {
		if slices.Contains(l.Residency, t) {
			return true
		}
	}
	return false
}

// Domain is the failure domain spot replicas spread over: the location's failure domain (or
// zone, or the location itself) and the instance type.
func Domain(l placement.Location, o placement.Offer) string {
	d := o.Location
	if l.FailureDomain != "" {
		d = l.FailureDomain
	} else if l.Zone != "" {
		d = l.Zone
	}
	return d + "/" + o.InstanceType
}
