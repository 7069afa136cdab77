package placement_test

import (
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

var rateNow = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Splitwise's decode throughput at TPOT <= 50 ms, Llama-2-70B on one 8-GPU node (SERVING.md's
// default profile): output tokens/s per replica.
var splitwise = map[string]float64{"A100-80GB": 172, "H100-80GB": 829}

// servingSnapshot is one rate workload over on-demand A100 and H100 offers in the given locations,
// priced per replica (one 8-GPU node). cap limits the H100 offers (0: no limit).
func servingSnapshot(a100, h100 float64, h100Cap int, rate float64, locs ...string) placement.Snapshot {
	var s placement.Snapshot
	for _, l := range locs {
		s.Locations = append(s.Locations, placement.Location{ID: l, Zone: l, Provider: "aws"})
		s.Offers = append(s.Offers,
			placement.Offer{ID: l + "-a100", Location: l, InstanceType: "p4de", GPUModel: "A100-80GB", GPUCount: 8,
				Market: placement.MarketOnDemand, PricePerHour: a100},
			placement.Offer{ID: l + "-h100", Location: l, InstanceType: "p5", GPUModel: "H100-80GB", GPUCount: 8,
				Market: placement.MarketOnDemand, PricePerHour: h100, Capacity: h100Cap})
	}
	s.Workloads = []placement.Workload{{ID: "chat", GPUModels: []string{"A100-80GB", "H100-80GB"}, GPUsPerReplica: 8,
		Markets: []placement.Market{placement.MarketOnDemand}, Throughput: maps.Clone(splitwise), DemandRate: rate,
		RateUnit: "tokens/s", ColdStart: 5 * time.Minute}}
	return s
}

// launchedBy counts the launches of a decision by GPU model, and their rate under tput.
func launchedBy(s placement.Snapshot, d placement.Decision, tput map[string]float64) (map[string]int, float64) {
	model := map[string]string{}
	for _, o := range s.Offers {
		model[o.ID] = o.GPUModel
	}
	out, rate := map[string]int{}, 0.0
	for _, a := range d.Actions {
		if a.Kind == placement.ActionLaunch {
			out[model[a.Offer]] += a.Count
			rate += float64(a.Count) * tput[model[a.Offer]]
		}
	}
	return out, rate
}

func TestRatePicksCheaperPerToken(t *testing.T) {
	tests := []struct {
		name       string
		a100, h100 float64
		h100Cap    int
		rate       float64
		want       map[string]int
	}{
		// 98.32/829 = 0.119 USD per token/s on H100 against 32.77/172 = 0.191 on A100, though an
		// A100 replica costs a third of an H100 one.
		{name: "H100 cheaper per token, dearer per replica", a100: 32.77, h100: 98.32, rate: 1600,
			want: map[string]int{"H100-80GB": 2}},
		// 150/829 = 0.181 against 25/172 = 0.145: now the A100 is cheaper per token too.
		{name: "A100 cheaper per token", a100: 25, h100: 150, rate: 1000,
			want: map[string]int{"A100-80GB": 6}},
		// One H100 serves 829; the 171 left cost less on one A100 (32.77) than on a second H100.
		{name: "the rest on the replica that covers it cheapest", a100: 32.77, h100: 98.32, rate: 1000,
			want: map[string]int{"H100-80GB": 1, "A100-80GB": 1}},
		// The cheapest per token has room for one replica: A100s cover the other 771.
		{name: "mix when the cheapest type runs short", a100: 32.77, h100: 98.32, h100Cap: 1, rate: 1600,
			want: map[string]int{"H100-80GB": 1, "A100-80GB": 5}},
		{name: "no demand, no minimum: nothing", a100: 32.77, h100: 98.32, rate: 0, want: map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := servingSnapshot(tt.a100, tt.h100, tt.h100Cap, tt.rate, "a")
			d := placement.Plan(s, placement.Policy{}, rateNow)
			got, rate := launchedBy(s, d, splitwise)
			if !maps.Equal(got, tt.want) {
				t.Fatalf("launched %v, want %v (actions %v)", got, tt.want, d.Actions)
			}
			if rate < tt.rate {
				t.Fatalf("launches serve %.0f tokens/s, below the %.0f needed", rate, tt.rate)
			}
			if len(d.Shortfalls) > 0 {
				t.Fatalf("unexpected shortfall %+v", d.Shortfalls)
			}
		})
	}
}

// The same workload planned in replicas ranks by price per replica, and takes the A100 the rate
// planning above refuses: the two rankings disagree on these prices.
func TestReplicaPlanningRanksPerReplica(t *testing.T) {
	s := servingSnapshot(32.77, 98.32, 0, 0, "a")
	s.Workloads[0].Throughput, s.Workloads[0].Demand = nil, 2
	got, _ := launchedBy(s, placement.Plan(s, placement.Policy{}, rateNow), splitwise)
	if want := map[string]int{"A100-80GB": 2}; !maps.Equal(got, want) {
		t.Fatalf("launched %v, want %v", got, want)
	}
}

func TestRateKeepsMinimums(t *testing.T) {
	tests := []struct {
		name           string
		rate           float64
		minRep, minLoc int
		wantN          int // 0: not checked beyond the bounds
	}{
		// One A100 (172) covers 100; the minimum asks two, each the cheapest replica.
		{name: "minimum above what the rate needs", rate: 100, minRep: 2, wantN: 2},
		{name: "locations above what the rate needs", rate: 100, minLoc: 2, wantN: 2},
		{name: "no demand keeps the minimum", rate: 0, minRep: 1, wantN: 1},
		{name: "large rate spans locations", rate: 3000, minLoc: 2},
		{name: "large rate with a minimum", rate: 3000, minRep: 5, minLoc: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := servingSnapshot(32.77, 98.32, 0, tt.rate, "a", "b")
			s.Workloads[0].MinReplicas, s.Workloads[0].MinLocations = tt.minRep, tt.minLoc
			pl := placement.NewPlanner(s, placement.Policy{}, rateNow)
			d := pl.Decision()
			got, rate := launchedBy(s, d, splitwise)
			n := 0
			for _, k := range got {
				n += k
			}
			locs := map[string]bool{}
			for _, a := range d.Actions {
				locs[strings.Split(a.Offer, "-")[0]] = true
			}
			if n < max(tt.minRep, tt.minLoc) || len(locs) < tt.minLoc || rate < tt.rate || (tt.wantN > 0 && n != tt.wantN) {
				t.Fatalf("%d replicas in %d locations serving %.0f; want %d (at least %d) in %d serving >= %.0f (%v)",
					n, len(locs), rate, tt.wantN, max(tt.minRep, tt.minLoc), tt.minLoc, tt.rate, d.Actions)
			}
			if target, ok := pl.Target("chat"); !ok || target != n {
				t.Fatalf("Planner.Target = %d, %v; want the %d replicas chosen", target, ok, n)
			}
			if len(d.Shortfalls) > 0 {
				t.Fatalf("unexpected shortfall %+v", d.Shortfalls)
			}
		})
	}
}

// An accepted model without a rate is no candidate, however cheap.
func TestRateModelWithoutRateDoesNotQualify(t *testing.T) {
	s := servingSnapshot(1, 98.32, 0, 1000, "a")
	delete(s.Workloads[0].Throughput, "A100-80GB")
	got, _ := launchedBy(s, placement.Plan(s, placement.Policy{}, rateNow), splitwise)
	if want := map[string]int{"H100-80GB": 2}; !maps.Equal(got, want) {
		t.Fatalf("launched %v, want %v", got, want)
	}
}

func TestRateShortfallSaysWhatIsNeeded(t *testing.T) {
	s := servingSnapshot(32.77, 98.32, 0, 1_000_000, "a")
	s.Workloads[0].MaxReplicas = 3
	d := placement.Plan(s, placement.Policy{}, rateNow)
	if len(d.Shortfalls) != 1 {
		t.Fatalf("shortfalls %+v, want one", d.Shortfalls)
	}
	sf := d.Shortfalls[0]
	if want := "needs 1,000,000 tokens/s; its most, 3 replicas, serve 2,487 tokens/s"; sf.Why != want {
		t.Errorf("why %q, want %q", sf.Why, want)
	}
	if sf.WantedRate != 1_000_000 || sf.PlacedRate != 3*829 || sf.Placed != 3 || sf.Wanted <= sf.Placed {
		t.Errorf("shortfall %+v: want 1e6 wanted, 2487 placed on 3 replicas, more wanted", sf)
	}
}

// Demand falls from 1,000 to 400 tokens/s on six ready A100s: three (516) still cover it, and
// the rest go as demand_down; no replica is launched.
func TestRateDemandDownDrainsWhatIsNotNeeded(t *testing.T) {
	s := readyA100s(500, 400)
	d := placement.Plan(s, placement.Policy{}, rateNow)
	drained := 0
	for _, a := range d.Actions {
		if a.Kind != placement.ActionDrain || a.Reason != placement.ReasonDemandDown {
			t.Fatalf("unexpected action %+v", a)
		}
		drained += a.Count
	}
	if drained != 3 {
		t.Fatalf("drained %d, want 3 (three A100s serve 516 >= 400)", drained)
	}
}

// Six ready A100s serve 1,032 tokens/s; H100s at the same price per replica are far cheaper per
// token, so the planner moves: one H100 (829) and one A100 kept (172) cover 1,000 at a third of
// the cost. It drains nothing before the H100 is ready (make-before-break).
func TestRateMoveIsMakeBeforeBreak(t *testing.T) {
	s := readyA100s(32.77, 1000)
	d := placement.Plan(s, placement.Policy{}, rateNow)
	got, _ := launchedBy(s, d, splitwise)
	if want := map[string]int{"H100-80GB": 1}; !maps.Equal(got, want) {
		t.Fatalf("launched %v, want %v", got, want)
	}
	for _, a := range d.Actions {
		if a.Kind == placement.ActionDrain || a.Reason != placement.ReasonCheaperOffer {
			t.Fatalf("unexpected action %+v: a move launches first and drains once ready", a)
		}
	}
}

// A reclaimed H100 is replaced (reclaim), not counted as growth.
func TestRateReclaimIsReplaced(t *testing.T) {
	s := servingSnapshot(32.77, 98.32, 0, 1600, "a")
	s.Replicas = []placement.Replica{
		{ID: "r1", Workload: "chat", Offer: "a-h100", State: placement.StateReady, Since: rateNow.Add(-time.Hour)},
		{ID: "r2", Workload: "chat", Offer: "a-h100", State: placement.StateReclaimed, Since: rateNow.Add(-time.Hour),
			Deadline: rateNow.Add(time.Minute)},
	}
	d := placement.Plan(s, placement.Policy{}, rateNow)
	if len(d.Actions) != 1 || d.Actions[0].Offer != "a-h100" || d.Actions[0].Count != 1 || d.Actions[0].Reason != placement.ReasonReclaim {
		t.Fatalf("actions %+v, want one H100 launched for the reclaim", d.Actions)
	}
}

// Spot H100s that are reclaimed often: one covers the rate, so losing it leaves nothing; the
// planner holds a hedge.
func TestRateHedgesRiskySpot(t *testing.T) {
	s := servingSnapshot(32.77, 98.32, 0, 800, "a", "b")
	s.Workloads[0].Markets = []placement.Market{placement.MarketSpot}
	for i := range s.Offers {
		s.Offers[i].Market = placement.MarketSpot
		s.Offers[i].PricePerHour /= 3
		s.Offers[i].History = []placement.Observation{{At: rateNow.Add(-20 * time.Minute), Kind: placement.ObsPreempted, Lived: 30 * time.Minute}}
	}
	d := placement.Plan(s, placement.Policy{}, rateNow)
	hedges := 0
	for _, a := range d.Actions {
		if a.Reason == placement.ReasonHedge {
			hedges += a.Count
		}
	}
	if hedges != 1 {
		t.Fatalf("actions %+v: want one hedge", d.Actions)
	}
}

func TestCheckRates(t *testing.T) {
	ok := map[string]float64{"A100-80GB": 172}
	tests := []struct {
		name    string
		w       placement.Workload
		wantErr string
	}{
		{name: "replicas", w: placement.Workload{ID: "w", Demand: 3}},
		{name: "rates", w: placement.Workload{ID: "w", Throughput: ok, DemandRate: 1200}},
		{name: "negative demand", w: placement.Workload{ID: "w", Throughput: ok, DemandRate: -1}, wantErr: "demand rate -1"},
		{name: "NaN demand", w: placement.Workload{ID: "w", Throughput: ok, DemandRate: math.NaN()}, wantErr: "demand rate NaN"},
		{name: "infinite demand", w: placement.Workload{ID: "w", Throughput: ok, DemandRate: math.Inf(1)}, wantErr: "demand rate +Inf"},
		{name: "zero rate", w: placement.Workload{ID: "w", Throughput: map[string]float64{"L4": 0}}, wantErr: "throughput 0 on L4"},
		{name: "NaN rate", w: placement.Workload{ID: "w", Throughput: map[string]float64{"L4": math.NaN()}}, wantErr: "throughput NaN on L4"},
		{name: "empty model", w: placement.Workload{ID: "w", Throughput: map[string]float64{"": 3}}, wantErr: "empty GPU model"},
		{name: "accepted model without rate", w: placement.Workload{ID: "w", GPUModels: []string{"A100-80GB", "H100-80GB"}, Throughput: ok},
			wantErr: "accepts H100-80GB but gives no throughput"},
		{name: "rate without throughput", w: placement.Workload{ID: "w", DemandRate: 5}, wantErr: "without a throughput"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.w.CheckRates()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("CheckRates() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// A demand rate that is not a number plans as no demand, and the plan says why.
func TestRateBadDemandIsExplained(t *testing.T) {
	s := servingSnapshot(32.77, 98.32, 0, math.NaN(), "a")
	s.Workloads[0].MinReplicas = 1
	d := placement.Plan(s, placement.Policy{}, rateNow)
	if got, _ := launchedBy(s, d, splitwise); !maps.Equal(got, map[string]int{"A100-80GB": 1}) {
		t.Fatalf("launched %v, want the minimum on the cheapest replica", got)
	}
	if len(d.Shortfalls) != 1 || !strings.Contains(d.Shortfalls[0].Why, "demand rate NaN") {
		t.Fatalf("shortfalls %+v, want the bad demand rate explained", d.Shortfalls)
	}
}

// readyA100s is the servingSnapshot with six ready A100s (1,032 tokens/s).
func readyA100s(h100 float64, rate float64) placement.Snapshot {
	s := servingSnapshot(32.77, h100, 0, rate, "a")
	for i := range 6 {
		s.Replicas = append(s.Replicas, placement.Replica{ID: "r" + string(rune('0'+i)), Workload: "chat",
			Offer: "a-a100", State: placement.StateReady, Since: rateNow.Add(-2 * time.Hour)})
	}
	return s
}

// At 156/h an H100 (0.188 per token/s) is cheaper per token than a new A100 (0.191), so a fresh
// workload takes one, but not than a running A100 once leaving it is paid for (a cold start over
// the payback horizon, and the minimum saving: 0.188 per token/s): the running ones stay.
func TestRateIncumbentsStayWhenAMoveDoesNotPay(t *testing.T) {
	s := readyA100s(156, 1000)
	if d := placement.Plan(s, placement.Policy{}, rateNow); len(d.Actions) > 0 {
		t.Fatalf("actions %+v, want none: the move does not pay", d.Actions)
	}
	s.Replicas = nil
	got, _ := launchedBy(s, placement.Plan(s, placement.Policy{}, rateNow), splitwise)
	if want := map[string]int{"H100-80GB": 1, "A100-80GB": 1}; !maps.Equal(got, want) {
		t.Fatalf("fresh: launched %v, want %v", got, want)
	}
}

// Within the cooldown after a price move, even a move that pays waits.
func TestRateCooldownHoldsAMove(t *testing.T) {
	s := readyA100s(32.77, 1000)
	s.Workloads[0].LastMoveAt = rateNow.Add(-5 * time.Minute)
	if d := placement.Plan(s, placement.Policy{}, rateNow); len(d.Actions) > 0 {
		t.Fatalf("actions %+v, want none during the cooldown", d.Actions)
	}
}

// Planner.Apply re-plans a workload planned by rate after a reclaim as a full plan would.
func TestRateApplyReplacesAReclaim(t *testing.T) {
	s := servingSnapshot(32.77, 98.32, 0, 1600, "a")
	s.Replicas = []placement.Replica{
		{ID: "r1", Workload: "chat", Offer: "a-h100", State: placement.StateReady, Since: rateNow.Add(-time.Hour)},
		{ID: "r2", Workload: "chat", Offer: "a-h100", State: placement.StateReady, Since: rateNow.Add(-time.Hour)},
	}
	pl := placement.NewPlanner(s, placement.Policy{}, rateNow)
	if d := pl.Decision(); len(d.Actions) > 0 {
		t.Fatalf("actions %+v, want none: two H100s cover 1,600", d.Actions)
	}
	lost := s.Replicas[1]
	lost.State, lost.Deadline = placement.StateReclaimed, rateNow.Add(2*time.Minute)
	d := pl.Apply(placement.Update{Replicas: []placement.Replica{lost}}, rateNow.Add(time.Minute))
	if len(d.Actions) != 1 || d.Actions[0].Offer != "a-h100" || d.Actions[0].Count != 1 || d.Actions[0].Reason != placement.ReasonReclaim {
		t.Fatalf("actions %+v, want one H100 launched for the reclaim", d.Actions)
	}
	if n, _ := pl.Target("chat"); n != 2 {
		t.Fatalf("Planner.Target = %d, want 2", n)
	}
}
