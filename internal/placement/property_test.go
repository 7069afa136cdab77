package placement_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/placement/placementtest"
)

var propNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// genSnapshot draws a small estate: locations, offers with random histories, workloads with
// replicas in every state, and budgets.
func genSnapshot(t *rapid.T) placement.Snapshot {
	var s placement.Snapshot
	nl := rapid.IntRange(1, 4).Draw(t, "locations")
	for i := range nl {
		s.Locations = append(s.Locations, placement.Location{ID: fmt.Sprintf("l%d", i),
			Zone: fmt.Sprintf("z%d", rapid.IntRange(0, 2).Draw(t, "zone")), Provider: []string{"aws", "gcp"}[i%2],
			Residency: []string{[]string{"us", "eu"}[i%2]}, EgressPerGB: 0.05})
	}
	no := rapid.IntRange(1, 6).Draw(t, "offers")
	markets := []placement.Market{placement.MarketSpot, placement.MarketOnDemand, placement.MarketReserved}
	kinds := []placement.ObservationKind{placement.ObsLaunchFailed, placement.ObsPreempted, placement.ObsLaunched, placement.ObsEnded}
	for i := range no {
		o := placement.Offer{ID: fmt.Sprintf("o%d", i), Location: fmt.Sprintf("l%d", rapid.IntRange(0, nl-1).Draw(t, "loc")),
			InstanceType: rapid.SampledFrom([]string{"p3", "p4d"}).Draw(t, "type"), GPUModel: rapid.SampledFrom([]string{"A100", "A100", "H100"}).Draw(t, "model"), GPUCount: 1,
			Market: rapid.SampledFrom(markets).Draw(t, "market"), PricePerHour: float64(rapid.IntRange(50, 500).Draw(t, "price")) / 100,
			Capacity: rapid.IntRange(0, 6).Draw(t, "capacity")}
		for range rapid.IntRange(0, 3).Draw(t, "history") {
			o.History = append(o.History, placement.Observation{Kind: rapid.SampledFrom(kinds).Draw(t, "kind"),
				At:    propNow.Add(-time.Duration(rapid.IntRange(0, 300).Draw(t, "age")) * time.Minute),
				Lived: time.Duration(rapid.IntRange(0, 300).Draw(t, "lived")) * time.Minute})
		}
		s.Offers = append(s.Offers, o)
	}
	states := []placement.ReplicaState{placement.StateLaunching, placement.StateReady, placement.StateReady, placement.StateDraining, placement.StateReclaimed}
	nw := rapid.IntRange(1, 3).Draw(t, "workloads")
	for i := range nw {
		min := rapid.IntRange(0, 4).Draw(t, "min")
		w := placement.Workload{ID: fmt.Sprintf("w%d", i), Team: []string{"ml", "search"}[i%2], GPUModels: []string{"A100"},
			MinReplicas: min, Demand: min + rapid.IntRange(0, 2).Draw(t, "extra"), MinLocations: rapid.IntRange(0, 2).Draw(t, "minloc"),
			ColdStart: 2 * time.Minute, WeightsGB: 20}
		if rapid.Bool().Draw(t, "residency") {
			w.Residency = []string{"eu"}
		}
		if rapid.Bool().Draw(t, "rated") {
			drawRates(t, &w)
		}
		s.Workloads = append(s.Workloads, w)
		for k := range rapid.IntRange(0, 4).Draw(t, "replicas") {
			s.Replicas = append(s.Replicas, placement.Replica{ID: fmt.Sprintf("w%d-r%d", i, k), Workload: w.ID,
				Offer: fmt.Sprintf("o%d", rapid.IntRange(0, no-1).Draw(t, "on")), State: rapid.SampledFrom(states).Draw(t, "state"),
				Since: propNow.Add(-time.Duration(rapid.IntRange(0, 600).Draw(t, "since")) * time.Minute)})
		}
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "budgets") {
		b := placement.Budget{Name: fmt.Sprintf("b%d", i), MaxPerHour: float64(rapid.IntRange(0, 1500).Draw(t, "cap")) / 100}
		switch rapid.IntRange(0, 3).Draw(t, "scope") {
		case 1:
			b.Scope.Team = "ml"
		case 2:
			b.Scope.Workload = "w0"
		case 3:
			b.Scope.Provider = "aws"
		}
		s.Budgets = append(s.Budgets, b)
	}
	s.Seed = rapid.Uint64().Draw(t, "seed")
	return s
}

// drawRates makes w a workload planned by rate: a rate on A100, on H100 or both (GPUModels
// listing them, or left empty), a demand rate, and sometimes a maximum.
func drawRates(t *rapid.T, w *placement.Workload) {
	w.Throughput = map[string]float64{}
	models := rapid.SampledFrom([][]string{{"A100"}, {"H100"}, {"A100", "H100"}}).Draw(t, "rated models")
	for _, m := range models {
		w.Throughput[m] = float64(rapid.IntRange(50, 900).Draw(t, "tput"))
	}
	w.GPUModels = nil
	if rapid.Bool().Draw(t, "list models") {
		w.GPUModels = models
	}
	w.Demand = 0
	w.DemandRate = float64(rapid.IntRange(0, 3000).Draw(t, "rate"))
	if rapid.Bool().Draw(t, "max") {
		w.MaxReplicas = w.MinReplicas + rapid.IntRange(0, 4).Draw(t, "max over min")
	}
}

// after lists the replicas that hold capacity once the decision is applied: live replicas not
// drained, and the launches, as (workload, offer) pairs.
func after(s placement.Snapshot, d placement.Decision) (held [][2]string, readyKept map[string]int) {
	drained := map[string]bool{}
	for _, a := range d.Actions {
		if a.Kind == placement.ActionDrain {
			for _, r := range a.Replicas {
				drained[r] = true
			}
		}
	}
	readyKept = map[string]int{}
	for _, r := range s.Replicas {
		if (r.State == placement.StateLaunching || r.State == placement.StateReady) && !drained[r.ID] {
			held = append(held, [2]string{r.Workload, r.Offer})
			if r.State == placement.StateReady {
				readyKept[r.Workload]++
			}
		}
	}
	for _, a := range d.Actions {
		if a.Kind == placement.ActionLaunch {
			for range a.Count {
				held = append(held, [2]string{a.Workload, a.Offer})
			}
		}
	}
	return held, readyKept
}

func hasApproval(d placement.Decision, workload string) bool {
	for _, a := range d.NeedsApproval() {
		if a.Workload == workload {
			return true
		}
	}
	return false
}

func TestPropertyNeverBelowMinimum(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		d := placement.Plan(s, placement.Policy{}, propNow)
		held, readyKept := after(s, d)
		short := map[string]bool{}
		for _, sf := range d.Shortfalls {
			short[sf.Workload] = true
		}
		for _, w := range s.Workloads {
			readyBefore := 0
			for _, r := range s.Replicas {
				if r.Workload == w.ID && r.State == placement.StateReady {
					readyBefore++
				}
			}
			if hasApproval(d, w.ID) {
				continue
			}
			if min(readyBefore, w.MinReplicas) > readyKept[w.ID] {
				t.Fatalf("%s: drains leave %d ready replicas, below min(%d ready, minimum %d)", w.ID, readyKept[w.ID], readyBefore, w.MinReplicas)
			}
			n := 0
			for _, h := range held {
				if h[0] == w.ID {
					n++
				}
			}
			if n < w.MinReplicas && !short[w.ID] {
				t.Fatalf("%s: plan holds %d replicas, below its minimum %d, with no shortfall reported", w.ID, n, w.MinReplicas)
			}
		}
	})
}

func TestPropertyBudgetCapsHoldOrAskApproval(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		d := placement.Plan(s, placement.Policy{}, propNow)
		held, _ := after(s, d)
		team := map[string]string{}
		for _, w := range s.Workloads {
			team[w.ID] = w.Team
		}
		offer := map[string]placement.Offer{}
		for _, o := range s.Offers {
			offer[o.ID] = o
		}
		provider := map[string]string{}
		for _, l := range s.Locations {
			provider[l.ID] = l.Provider
		}
		for _, b := range s.Budgets {
			spend, approval := 0.0, false
			for _, h := range held {
				o := offer[h[1]]
				sc := b.Scope
				if (sc.Workload != "" && sc.Workload != h[0]) || (sc.Team != "" && sc.Team != team[h[0]]) ||
					(sc.Provider != "" && sc.Provider != provider[o.Location]) || (sc.Location != "" && sc.Location != o.Location) {
					continue
				}
				spend += o.PricePerHour
				approval = approval || hasApproval(d, h[0])
			}
			if spend > b.MaxPerHour+1e-9 && !approval {
				t.Fatalf("budget %s: plan spends %.2f/h over its cap %.2f/h with no approval asked", b.Name, spend, b.MaxPerHour)
			}
		}
	})
}

func TestPropertySpotSpreadsOverTwoDomains(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		s.Replicas, s.Budgets = nil, nil
		s.Workloads = s.Workloads[:1]
		for i := range s.Offers {
			s.Offers[i].History = nil
			s.Offers[i].Capacity = max(s.Offers[i].Capacity, 1)
		}
		d := placement.Plan(s, placement.Policy{}, propNow)
		locs := map[string]placement.Location{}
		for _, l := range s.Locations {
			locs[l.ID] = l
		}
		offer := map[string]placement.Offer{}
		onOffer := map[string]bool{}
		for _, o := range s.Offers {
			offer[o.ID] = o
			if o.Market == placement.MarketSpot && placementtest.Qualifies(o, locs[o.Location], s.Workloads[0]) {
				onOffer[placementtest.Domain(locs[o.Location], o)] = true
			}
		}
		used, spot := map[string]bool{}, 0
		for _, a := range d.Actions {
			if o := offer[a.Offer]; a.Kind == placement.ActionLaunch && o.Market == placement.MarketSpot {
				spot += a.Count
				used[placementtest.Domain(locs[o.Location], o)] = true
			}
		}
		if spot >= 2 && len(onOffer) >= 2 && len(used) < 2 {
			t.Fatalf("%d spot replicas all in %v while %d domains are on offer", spot, used, len(onOffer))
		}
	})
}

func TestPropertyDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		d1 := placement.Plan(s, placement.Policy{}, propNow)
		d2 := placement.Plan(s, placement.Policy{}, propNow)
		if !reflect.DeepEqual(d1, d2) {
			t.Fatalf("two plans of one snapshot differ:\n%v\n%v", d1, d2)
		}
		// The order of the snapshot's lists carries no meaning: reversing them changes nothing.
		r := s
		r.Locations, r.Offers = slices.Clone(s.Locations), slices.Clone(s.Offers)
		r.Workloads, r.Replicas = slices.Clone(s.Workloads), slices.Clone(s.Replicas)
		slices.Reverse(r.Locations)
		slices.Reverse(r.Offers)
		slices.Reverse(r.Workloads)
		slices.Reverse(r.Replicas)
		l1, l3 := placementtest.Lines(d1), placementtest.Lines(placement.Plan(r, placement.Policy{}, propNow))
		if !slices.Equal(l1, l3) {
			t.Fatalf("plan depends on input order:\n%v\n%v", l1, l3)
		}
	})
}
