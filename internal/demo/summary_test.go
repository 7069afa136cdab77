package demo

import (
	"slices"
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
	per := perWorkload(w, cfg, sum, h, nil)
	p := per.Rows[0]
	if p["egress_usd"] != 30.0 || p["saving_pct"] != 50.0 {
		t.Errorf("per workload row %v: want egress_usd 30 and saving_pct 50", p)
	}
	want := []string{"workload", "min_replicas", "available_pct_of_desired", "available_pct_of_min"}
	if !slices.Equal(per.Columns[:4], want) || p["available_pct_of_desired"] != 48.1 || p["available_pct_of_min"] != 99.4 {
		t.Errorf("per workload columns %v row %v: want %v with the report's figures", per.Columns, p, want)
	}
}
