package report

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/report/reporttest"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// benchSeries is the estate's size for BenchmarkConsoleReports: BURSAR_BENCH_SERIES, default
// 10,000 (the goal).
func benchSeries(b *testing.B) int {
	v := os.Getenv("BURSAR_BENCH_SERIES")
	if v == "" {
		return 10_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100_000 {
		b.Fatalf("BURSAR_BENCH_SERIES=%q: want a whole number of series from 1 to 100000", v)
	}
	return n
}

// consoleRequests are the reports the console's pages run over a window ending at end, as it
// sends them: fleet, decisions, holds, budget, cost by workload, savings, tokens, idle and jobs.
func consoleRequests(b *testing.B, w Window, end time.Time, policies []budget.Policy) []Request {
	o := Options{Window: w, Now: end}
	var out []Request
	for _, name := range []string{"fleet", "decisions", "holds", "budget", "cost", "savings", "tokens", "idle", "jobs"} {
		r := NewRequest(name, o)
		switch name {
		case "budget":
			r.Since, r.Until, r.Policies = time.Time{}, time.Time{}, policies
		case "cost", "savings", "tokens":
			r.By = []Dim{Workload}
		}
		if err := r.Validate(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		out = append(out, r)
	}
	return out
}

// BenchmarkConsoleReports times each report the console's pages run, over 7 and 30 days of an
// estate of 10,000 series (reporttest.Estate), as the console runs them (Reporter.Run on the
// store), and reports each one's 95th percentile (p95_ms) over the runs. Run it with a fixed
// count, e.g. -benchtime 20x; BURSAR_BENCH_SERIES and BURSAR_BENCH_DAYS make it smaller.
func BenchmarkConsoleReports(b *testing.B) {
	st := storetest.New(b)
	ctx := context.Background()
	e := reporttest.Estate{Series: benchSeries(b), Days: benchDays(b)}
	t0 := time.Now()
	cfg, end := e.Fill(ctx, b, st)
	gen := time.Since(t0)
	b.Logf("filled %d series over %d days in %s", e.Series, e.Days, gen.Round(time.Millisecond))
	settle(ctx, b, st)
	scope, _ := budget.ParseScope("all")
	warn, _ := budget.ParseLevel("80%")
	policies := []budget.Policy{{Name: "fleet-month", Scope: scope, Period: budget.Month, Limit: 5e7, Currency: "USD",
		Thresholds: []budget.Threshold{{At: warn, On: budget.Actual, Action: budget.Notify}}}}
	rep := Local{st}
	for _, days := range []int{7, 30} {
		w := Window{Since: end.Add(-time.Duration(days) * 24 * time.Hour), Until: end}
		for _, req := range consoleRequests(b, w, end, policies) {
			req.Fleet = cfg
			b.Run(fmt.Sprintf("%s/%dd", req.Report, days), func(b *testing.B) {
				var took []time.Duration
				rows := 0
				for b.Loop() {
					t0 := time.Now()
					res, err := rep.Run(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					took, rows = append(took, time.Since(t0)), len(res.Rows)
				}
				b.ReportMetric(p95(took), "p95_ms")
				b.ReportMetric(float64(rows), "rows")
				b.ReportMetric(gen.Seconds(), "fill_s")
			})
		}
	}
}

// p95 is the 95th percentile of durations in milliseconds: the smallest that at least 95% of
// them do not exceed.
func p95(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*95+99)/100 - 1
	return float64(s[i].Microseconds()) / 1000
}

func TestP95(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		want float64
	}{
		{"none", nil, 0},
		{"one", ms(7), 7},
		{"twenty: the 19th", ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 19},
		{"ten: the largest", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 100), 100},
	}
	for _, tt := range tests {
		if got := p95(tt.in); got != tt.want {
			t.Errorf("%s: p95 %v, want %v", tt.name, got, tt.want)
		}
	}
}
