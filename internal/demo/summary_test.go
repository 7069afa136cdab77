package demo

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
)

// TestSummaryIsNetOfEgress checks that the demo's tables take the egress the arbiter's own moves
// caused off the savings and show it as a column, and that the availability columns are the
// report's, named by their target, the report's default first.
func TestSummaryIsNetOfEgress(t *testing.T) {
	w := report.Window{Since: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)}
	cost := &report.Result{Rows: []cli.Row{{"workload": "chat", "location": "aws-use1", "usd": 20.0, "gpu_hours": 4.0, "spot_share": 1.0}}}
	savings := &report.Result{Rows: []cli.Row{{"workload": "chat", "location": "aws-use1", "usd": 20.0,
		"on_demand_same_usd": 100.0, "egress_usd": 30.0}}}
	h := history{available: map[string]map[string]float64{
		"available_pct_of_desired": {"chat": 48.1}, "available_pct_of_min": {"chat": 99.4}}}
	sum := summarize(w, cost, &report.Result{}, savings, h, nil)
	if len(sum.Rows) != 1 {
		t.Fatalf("rows %v, want one", sum.Rows)
	}
	r := sum.Rows[0]
	// $100 on-demand, $20 paid, $30 of egress: $50 saved, 50 %, not 80 %.
	if r["egress_usd"] != 30.0 || r["saving_pct"] != 50.0 || !slices.Contains(sum.Columns, "egress_usd") {
		t.Errorf("summary row %v (columns %v): want egress_usd 30 and saving_pct 50", r, sum.Columns)
	}
	cfg := &fleet.Config{Workloads: []fleet.Workload{{Name: "chat", Replicas: fleet.Replicas{Min: 2}}}}
	per := perWorkload(w, cfg, sum, h, nil, nil)
	p := per.Rows[0]
	if p["egress_usd"] != 30.0 || p["saving_pct"] != 50.0 {
		t.Errorf("per workload row %v: want egress_usd 30 and saving_pct 50", p)
	}
	want := []string{"workload", "min_replicas", "available_pct_of_desired", "available_pct_of_min"}
	if !slices.Equal(per.Columns[:4], want) || p["available_pct_of_desired"] != 48.1 || p["available_pct_of_min"] != 99.4 {
		t.Errorf("per workload columns %v row %v: want %v with the report's figures", per.Columns, p, want)
	}
}

// TestServedCountsMinutesWithEnoughCapacity checks the capacity-availability and the unserved
// share on minutes computed by hand, and that the per workload table prints them.
func TestServedCountsMinutesWithEnoughCapacity(t *testing.T) {
	var s servedStat
	steps := []struct {
		demand, capacity, wantServed float64
	}{
		{demand: 100, capacity: 100, wantServed: 1},   // enough
		{demand: 100, capacity: 60, wantServed: 0.75}, // short: 1.25 × 60 = 75 served
		{demand: 100, capacity: 90, wantServed: 1},    // short, but served above the rate
		{demand: 0, capacity: 0, wantServed: 0},       // nothing asked: enough
	}
	for i, st := range steps {
		if got := s.add(st.demand, st.capacity); got != st.wantServed {
			t.Errorf("minute %d: served %v of the demand, want %v", i, got, st.wantServed)
		}
	}
	// 2 of 4 minutes with enough capacity; 25 of 300 tokens/s-minutes unserved.
	if s.enoughPct() != 50 || s.unservedPct() != 8.3 {
		t.Errorf("enough %v %%, unserved %v %%; want 50 and 8.3", s.enoughPct(), s.unservedPct())
	}
	w := report.Window{Since: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)}
	cfg := &fleet.Config{Workloads: []fleet.Workload{{Name: "chat"}, {Name: "idle"}}}
	per := perWorkload(w, cfg, &report.Result{}, history{}, nil, map[string]*servedStat{"chat": &s})
	if r := per.Rows[0]; r["enough_capacity_pct"] != 50.0 || r["unserved_pct"] != 8.3 {
		t.Errorf("chat row %v: want enough_capacity_pct 50 and unserved_pct 8.3", r)
	}
	if r := per.Rows[1]; r["enough_capacity_pct"] != nil {
		t.Errorf("a workload the demo did not drive shows %v, want no figure", r["enough_capacity_pct"])
	}
	var b strings.Builder
	res := &Result{Workloads: per, Summary: &report.Result{Title: "Per workload and location"},
		ByGPU: &report.Result{Title: "Cost per million tokens by workload and GPU type", Columns: []string{"workload", "gpu", "usd_per_m_tokens"},
			Rows: []cli.Row{{"workload": "chat", "gpu": "T4", "usd_per_m_tokens": 0.2147}}}}
	if err := res.Print(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ENOUGH_CAPACITY_PCT", "Cost per million tokens by workload and GPU type", "0.2147"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestReplicaRateByOffer checks that a ready replica serves its GPU model's rate, read from the
// offer id the arbiter launched it on, and the workload's lowest rate where the model is unknown.
func TestReplicaRateByOffer(t *testing.T) {
	w := &fleet.Workload{Name: "chat", Scaling: fleet.Scaling{Metric: fleet.MetricTokens, PerReplica: 800},
		Serving: fleet.Serving{PerReplica: map[string]float64{"T4": 800, "A100-40GB": 3900}}}
	d := &driver{gpus: map[string]string{"a2-highgpu-1g": "A100-40GB", "g4dn.xlarge": "T4"}}
	tests := []struct {
		offer string
		want  float64
	}{
		{"gcp-use1b/us-east1-b/a2-highgpu-1g/spot", 3900},
		{"aws-usw2b/us-west-2b/g4dn.xlarge/on_demand", 800},
		{"aws-use1a/us-east-1a/p3.2xlarge/spot", 800}, // not in the catalog
		{"", 800},
	}
	for _, tt := range tests {
		if got := d.rate(w, tt.offer); got != tt.want {
			t.Errorf("rate(%q) = %v, want %v", tt.offer, got, tt.want)
		}
	}
}
