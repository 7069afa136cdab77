package reporttest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// TestFill: a small estate fills every table the reports read with the rows its size says, and
// the rollups agree with it (the token counters of the last hours reach tokens_hourly through its
// view).
func TestFill(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	end := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	e := Estate{Series: 80, Days: 2, GPUs: 16, Jobs: 4, End: end}
	cfg, gotEnd := e.Fill(ctx, t, st)
	if !gotEnd.Equal(end) || len(cfg.Workloads) != 2 || len(cfg.Locations) != 10 {
		t.Fatalf("end %s, %d workloads, %d locations; want %s, 2, 10", gotEnd, len(cfg.Workloads), len(cfg.Locations), end)
	}
	if r, ok := cfg.Workloads[1].RateFor("A100-80GB"); !ok || r != 1200 {
		t.Errorf("svc0001's A100 rate %v, %v", r, ok)
	}
	count := func(q string) int64 {
		out, err := st.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ N int64 }
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		return v.N
	}
	tests := []struct {
		table string
		want  int64
	}{
		{"cost_hourly", 80 * 48},
		{"replica_latest", 80},
		{"tokens_hourly", 20 * 48}, // 46 hours written, the last 2 from the counters
		{"tokens_sample", 20 * 120},
		{"gpu_sample", 16 * 2 * 144},
		{"price_observed", 40 * 2 * 144},
		{"plan_decided", 80 * 2 * 2},
		{"action_updated", 0}, // every plan's step, plus the holds decided: set below
	}
	holds := count(fmt.Sprintf("SELECT count() AS n FROM %s WHERE needs_approval", st.Table("plan_decided")))
	pending := count(fmt.Sprintf("SELECT count() AS n FROM %s WHERE needs_approval AND at >= %s - INTERVAL 1 HOUR",
		st.Table("plan_decided"), fmt.Sprintf("toDateTime64('%s', 3, 'UTC')", end.Format("2006-01-02 15:04:05"))))
	tests[len(tests)-1].want = 80*2*2 + holds - pending
	for _, tt := range tests {
		q := fmt.Sprintf("SELECT count() AS n FROM (SELECT * FROM %s FINAL)", st.Table(tt.table))
		if got := count(q); got != tt.want {
			t.Errorf("%s: %d rows, want %d", tt.table, got, tt.want)
		}
	}
	if holds == 0 {
		t.Error("no plan needs approval")
	}
	// The rollups and the fleet agree: every series costs every hour.
	if n := count(fmt.Sprintf("SELECT uniqExact(workload, location, gpu_model, market) AS n FROM %s", st.Table("cost_hourly"))); n != 80 {
		t.Errorf("cost_hourly has %d series, want 80", n)
	}
}
