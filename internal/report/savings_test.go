package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestSavings(t *testing.T) {
	st := history(t)
	seed(t, st, "price_observed", "id, at, version, provider, region, zone, instance_type, gpu_model, gpu_count, "+
		"gpu_memory_gb, market, usd_per_hour, source",
		[]any{"p1", at("08:00"), "1", "aws", "us-east-1", "us-east-1a", "p5.48xlarge", "H100-80GB", 8, 80, "on_demand", 80, "aws"},
		[]any{"p2", at("08:00"), "1", "aws", "us-east-1", "us-east-1a", "p5.48xlarge", "H100-80GB", 8, 80, "spot", 30, "aws"},
		// another zone of the region, not the location's: not its price
		[]any{"p3", at("08:00"), "1", "aws", "us-east-1", "us-east-1c", "p5.48xlarge", "H100-80GB", 8, 80, "on_demand", 40, "aws"},
		[]any{"p4", at("08:00"), "1", "aws", "us-west-2", "us-west-2b", "p5.48xlarge", "H100-80GB", 8, 80, "on_demand", 64, "aws"},
		// after the window: not seen yet
		[]any{"p5", at("13:00"), "1", "aws", "us-west-2", "us-west-2b", "p5.48xlarge", "H100-80GB", 8, 80, "on_demand", 40, "aws"},
		[]any{"p6", at("08:00"), "1", "gcp", "us-central1", "", "a2-ultragpu-1g", "A100-80GB", 1, 80, "on_demand", 3, "gcp"},
	)
	cols := "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, replicas, reason, actor, detail"
	seed(t, st, "action_updated", cols,
		[]any{"a1p", at("10:29"), "1", "chat", "m1", "p", "proposed", "launch", "aws-use1", awsSpot, "spot", 2, "cheaper_offer", "arbiter", ""},
		[]any{"a1a", at("10:30"), "1", "chat", "m1", "p", "applied", "launch", "aws-use1", awsSpot, "spot", 2, "cheaper_offer", "arbiter", ""},
		[]any{"a2a", at("10:40"), "1", "chat", "h1", "p", "applied", "launch", "aws-use1", awsSpot, "spot", 1, "hedge", "arbiter", ""},
		[]any{"a3p", at("10:50"), "1", "chat", "m2", "p", "proposed", "launch", "gcp-usc1", gcpOD, "on_demand", 1, "cheaper_offer", "arbiter", ""},
	)
	res, err := Savings(ctxT(t), st, opts("09:00", "12:00", Location))
	if err != nil {
		t.Fatal(err)
	}
	// aws: 12 GPU-hours at $80/8 in us-east-1a, or $64/8 in us-west-2, against $27 paid and the
	// $18 of egress the move there pulled (2 replicas x 100 GB x $0.09/GB): the savings are net of it.
	// gcp: 3 GPU-hours at $3, the price paid.
	want := []string{
		"aws-use1 usd=27 gpu_hours=12 egress_usd=18 on_demand_same_usd=120 saving_same_usd=75 cheapest_on_demand_usd=96 saving_cheapest_usd=51",
		"gcp-usc1 usd=9 gpu_hours=3 egress_usd=0 on_demand_same_usd=9 saving_same_usd=0 cheapest_on_demand_usd=9 saving_cheapest_usd=0",
	}
	g := got(res, "usd", "gpu_hours", "egress_usd", "on_demand_same_usd", "saving_same_usd", "cheapest_on_demand_usd", "saving_cheapest_usd")
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
	if s, e := res.Total["saving_same_usd"], res.Total["egress_usd"]; s != 75.0 || e != 18.0 {
		t.Errorf("total saving = %v, egress %v; want 75 net of 18", s, e)
	}
	// JSON and CSV carry the egress and the net savings, not only the table's note.
	for _, format := range []string{"json", "csv"} {
		var b strings.Builder
		if err := Write(&b, format, res, ""); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "egress_usd") || !strings.Contains(b.String(), "75") {
			t.Errorf("-o %s lacks the egress or the net saving:\n%s", format, b.String())
		}
	}
	// One applied move of 2 replicas pulling 100 GB at $0.09/GB; the proposed one never ran.
	wantNote := "arbitrage cost: 1 moves (2 replicas, $18.00 egress of weights, taken off the savings), 1 hedging launches"
	if n := res.Notes[len(res.Notes)-1]; n != wantNote {
		t.Errorf("note = %q, want %q", n, wantNote)
	}
	o := opts("09:00", "12:00", Location)
	o.Fleet = nil
	if _, err := Savings(ctxT(t), st, o); err == nil || !strings.Contains(err.Error(), "--fleet") {
		t.Errorf("without a fleet file: %v, want an error asking for --fleet", err)
	}
}

// TestArbitrageChargesTheReplicasAMoveAdded: action.updated carries the count a group was set to,
// so a move into a group that already ran replicas added only what its plan.decided says it
// launched (its delta).
func TestArbitrageChargesTheReplicasAMoveAdded(t *testing.T) {
	st := storetest.New(t)
	cols := "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, replicas, reason, actor, detail"
	row := func(id, when, kind, reason string, n int) []any {
		return []any{id, at(when), "1", "chat", id, "p", "applied", kind, "aws-use1", awsSpot, "spot", n, reason, "arbiter", ""}
	}
	seed(t, st, "action_updated", cols,
		row("x0", "08:00", "launch", "demand_up", 1),     // before the window: 0 -> 1
		row("x1", "10:00", "launch", "cheaper_offer", 3), // 1 -> 3: 2 moved
		row("x2", "10:10", "drain", "demand_down", 2),
		row("x3", "10:20", "launch", "cheaper_offer", 4), // 2 -> 4: 2 moved
		row("x4", "10:30", "launch", "cheaper_offer", 5), // 4 -> 5: 1 moved
		[]any{"x5p", at("10:40"), "1", "chat", "x5", "p", "proposed", "launch", "aws-use1", awsSpot, "spot", 9, "cheaper_offer", "arbiter", ""},
	)
	plan := func(id, when string, delta int) []any {
		return []any{"d" + id, at(when), "1", "chat", "p" + id,
			fmt.Sprintf("[('%s','launch','aws-use1','%s','spot',0,%d,'cheaper_offer',false)]", id, awsSpot, delta)}
	}
	seed(t, st, "plan_decided", "id, at, version, workload, plan_id, actions",
		plan("x1", "10:00", 2), plan("x3", "10:20", 2), plan("x4", "10:30", 1), plan("x5", "10:40", 9))
	a, err := arbitrageCost(ctxT(t), st, opts("09:00", "12:00", Location))
	if err != nil {
		t.Fatal(err)
	}
	// 5 replicas x 100 GB x $0.09/GB; the proposal never applied moves nothing.
	if a.Moves != 3 || a.MovedReplicas != 5 || math.Abs(a.EgressUSD-45) > 1e-9 {
		t.Errorf("%d moves of %d replicas, $%.2f egress; want 3 moves of 5 replicas, $45", a.Moves, a.MovedReplicas, a.EgressUSD)
	}
}
