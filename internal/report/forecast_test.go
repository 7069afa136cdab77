package report

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// TestForecastDailyWorkload: a workload that runs one $10/h replica from 08:00 to 20:00 every
// day for three weeks. At 12:30 on 30 November the month is forecast to end with the 7.5 hours
// it still runs that day; the burn rate carries $10/h to midnight.
func TestForecastDailyWorkload(t *testing.T) {
	st := storetest.New(t)
	var rows [][]any
	row := func(t time.Time, ready int, prevAt time.Time, prevReady int) {
		rows = append(rows, []any{fmt.Sprintf("fc%d", len(rows)), t, "1", "batch", "gcp-usc1", "gcp", "on_demand", gcpOD,
			"A100-80GB", 1, 10.0, ready, ready, prevAt, prevReady, 10.0, "[]", "[]"})
	}
	first := at("00:00").AddDate(0, 0, -21)
	prev, prevReady := first.Add(8*time.Hour), 0
	for d := first; d.Before(at("00:00")); d = d.AddDate(0, 0, 1) {
		row(d.Add(8*time.Hour), 1, prev, prevReady)
		row(d.Add(20*time.Hour), 0, d.Add(8*time.Hour), 1)
		prev, prevReady = d.Add(20*time.Hour), 0
	}
	row(at("08:00"), 1, prev, 0)
	row(at("12:00"), 1, at("08:00"), 1) // the fleet's latest report
	seed(t, st, "replica_state", "id, at, version, workload, location, provider, market, offer, gpu_model, "+
		"gpus_per_replica, usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour, instances, prev_instances", rows...)

	warn, _ := budget.ParseLevel("80%")
	p := budget.Policy{Name: "batch-month", Scope: budget.Scope{Workload: "batch"}, Period: budget.Month, Limit: 4000,
		Currency: "USD", Thresholds: []budget.Threshold{{At: warn, On: budget.Forecast, Action: budget.Notify}}}
	now := at("12:30")
	res, err := Forecast(ctxT(t), st, []budget.Policy{p}, Options{Window: Window{Since: now.AddDate(0, 0, -84), Until: now}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("rows %v: want usd and gpu_hours (no tokens served)", res.Rows)
	}
	spent := 21*12*10.0 + 4*10 // the open interval counts to the 12:00 report
	tests := []struct {
		metric                    string
		wantSoFar, wantF, wantLin float64
	}{
		{"usd", spent, spent + 7.5*10, spent + 11.5*10},
		{"gpu_hours", spent / 10, spent/10 + 7.5, spent/10 + 11.5},
	}
	for i, tt := range tests {
		r := res.Rows[i]
		if r["metric"] != tt.metric || !close(r["so_far"], tt.wantSoFar, 1e-6) || !close(r["forecast"], tt.wantF, 1e-3) ||
			!close(r["burn_rate_forecast"], tt.wantLin, 1e-6) {
			t.Errorf("row %v: want %s so far %.2f, forecast %.2f, burn rate %.2f", r, tt.metric, tt.wantSoFar, tt.wantF, tt.wantLin)
		}
		if r["model"] != "weekly" || r["interval"] != "backtested" || !inInterval(r, tt.wantF) {
			t.Errorf("row %v: want the weekly model, its backtested interval holding %.2f", r, tt.wantF)
		}
	}
	if r := res.Rows[0]; !close(r["limit_pct"], 100*(spent+75)/4000, 0.01) {
		t.Errorf("limit_pct %v", r["limit_pct"])
	}
}

func TestForecastShortHistoryAndTokens(t *testing.T) {
	st := history(t)
	p := budget.Policy{Name: "chat-day", Scope: budget.Scope{Workload: "chat"}, Period: budget.Day, Limit: 500, Currency: "USD"}
	o := opts("09:00", "12:30")
	res, err := Forecast(ctxT(t), st, []budget.Policy{p}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || res.Rows[2]["metric"] != metricPerToken {
		t.Fatalf("rows %v: want usd, gpu_hours and usd_per_m_tokens", res.Rows)
	}
	for _, r := range res.Rows {
		if r["model"] != "burn rate" || r["interval"] != "range seen" || r["error_pct"] != "" ||
			r["forecast"] != r["burn_rate_forecast"] {
			t.Errorf("row %v: hours of history give the burn rate, the range seen and no measured error", r)
		}
	}
}

func close(v any, want, tol float64) bool {
	f, ok := v.(float64)
	return ok && math.Abs(f-want) <= tol*math.Max(1, math.Abs(want))
}

func inInterval(r cli.Row, x float64) bool {
	lo, ok1 := r["low_80"].(float64)
	hi, ok2 := r["high_80"].(float64)
	return ok1 && ok2 && lo <= x+1e-3 && x-1e-3 <= hi
}
