package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/report"
	"github.com/bursar-dev/bursar/internal/report/reporttest"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// BenchmarkConsole loads every page over 30 days of history at 10,000 series (the rollups
// reporttest.Estate writes) and reports each page's p95 beside the p95 of the reports it runs,
// run alone in the same loop: the difference is what the console adds (rendering, and the reports
// it runs side by side). BURSAR_CONSOLE_BENCH_SERIES sets a smaller estate for a quick look.
func BenchmarkConsole(b *testing.B) {
	series := 10000
	if v, err := strconv.Atoi(os.Getenv("BURSAR_CONSOLE_BENCH_SERIES")); err == nil && v > 0 {
		series = v
	}
	ctx := context.Background()
	st := storetest.New(b)
	fl, end := reporttest.Estate{Series: series, Days: 30}.Fill(ctx, b, st)
	policy := budget.Policy{Name: "monthly", Scope: budget.Scope{All: true}, Period: budget.Month, Limit: 5e6, Currency: "USD",
		Thresholds: []budget.Threshold{{At: budget.Level{Value: 80, Percent: true}, Action: budget.Notify}}}
	policy.Normalize()
	s, err := New(Options{Reports: report.Local{Q: st}, Fleet: fl, Policies: func() []budget.Policy { return []budget.Policy{policy} },
		Access: Access{Addr: "127.0.0.1:0"}, Now: func() time.Time { return end }})
	if err != nil {
		b.Fatal(err)
	}
	plan := firstPlan(b, s)
	workload := fl.Workloads[0].Name
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	for _, pg := range []struct {
		name, path string
		reports    map[string]url.Values
	}{
		{"fleet", "/", map[string]url.Values{"fleet": q("window=24h"), "tokens": q("window=24h&aggregate=workload")}},
		{"decisions", "/decisions?window=7d", map[string]url.Values{"decisions": q("window=7d")}},
		{"decisions-workload", "/decisions?window=yesterday&workload=" + workload, dayReports(workload, end)},
		{"decision", "/decisions/" + plan + "?window=30d", map[string]url.Values{"decisions": q("window=30d&plan=" + plan)}},
		{"approvals", "/approvals", map[string]url.Values{"holds": q("window=7d")}},
		{"budgets", "/budgets", map[string]url.Values{"budget": q("")}},
		{"costs-7d", "/costs?window=7d&aggregate=workload", costReports("7d")},
		{"costs-30d", "/costs?window=30d&aggregate=workload", costReports("30d")},
	} {
		b.Run(pg.name, func(b *testing.B) {
			var page, alone []time.Duration
			for b.Loop() {
				t0 := time.Now()
				rec := httptest.NewRecorder()
				s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, pg.path, nil))
				page = append(page, time.Since(t0))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", pg.path, rec.Code)
				}
				t0 = time.Now()
				for key, rq := range pg.reports {
					name, _, _ := strings.Cut(key, "/")
					req, err := parseQuery(name, rq, end)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.answer(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
				alone = append(alone, time.Since(t0))
			}
			b.ReportMetric(p95ms(page), "p95_ms")
			b.ReportMetric(p95ms(alone), "reports_p95_ms")
		})
	}
}

// costReports are the reports the costs page runs over window.
func costReports(window string) map[string]url.Values {
	by := url.Values{"window": {window}, "aggregate": {"workload"}}
	return map[string]url.Values{"cost": by, "savings": by, "tokens": by,
		"idle": {"window": {window}, "aggregate": {"location,gpu"}}, "jobs": {"window": {window}}}
}

// dayReports are the reports the decisions page runs for one workload over yesterday: the
// decisions, and the tokens report of each of the seven days up to the window's end. Named by
// report and day, since each runs once.
func dayReports(workload string, end time.Time) map[string]url.Values {
	out := map[string]url.Values{"decisions": {"window": {"yesterday"}, "filter": {"workload:" + workload}}}
	last := end.Truncate(24 * time.Hour)
	for i := range 7 {
		since := last.AddDate(0, 0, i-7)
		out["tokens/"+since.Format(time.DateOnly)] = url.Values{"since": {since.Format(time.RFC3339)},
			"until": {since.AddDate(0, 0, 1).Format(time.RFC3339)}, "aggregate": {"workload"}, "filter": {"workload:" + workload}}
	}
	return out
}

// firstPlan is the newest plan of the estate, for the decision page.
func firstPlan(b *testing.B, s *Server) string {
	req, err := parseQuery("decisions", url.Values{"window": {"1d"}}, s.now())
	if err != nil {
		b.Fatal(err)
	}
	a, err := s.answer(context.Background(), req)
	if err != nil || len(a.Rows) == 0 {
		b.Fatalf("no plan in the estate's last day: %v", err)
	}
	return cell(a.Rows[0], "plan_id")
}

// p95ms is the 95th percentile of ds, in milliseconds.
func p95ms(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[(len(s)*95+99)/100-1]) / float64(time.Millisecond)
}
