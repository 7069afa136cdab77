package promtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/bursar-dev/bursar/internal/promtest"
)

// TestStartScrapesAndQueries: a Prometheus started by Start scrapes a target, reports it up, and
// answers a query with the value the target serves; a target nobody serves is reported down.
func TestStartScrapesAndQueries(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "promtest_answer", Help: "A value to read back."})
	g.Set(42)
	reg.MustRegister(g)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // its address now refuses connections

	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte("groups:\n  - name: t\n    rules:\n      - alert: Answered\n        expr: promtest_answer == 42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := promtest.Start(t, promtest.Config{Interval: time.Second, RuleFiles: []string{rules}, Jobs: []promtest.Job{
		{Name: "served", Targets: []string{strings.TrimPrefix(srv.URL, "http://")}},
		{Name: "gone", Targets: []string{strings.TrimPrefix(gone.URL, "http://")}}}})
	ctx := context.Background()
	promtest.Eventually(t, time.Minute, "both targets scraped", func() error {
		ts, err := p.Targets(ctx)
		if err != nil {
			return err
		}
		health := map[string]string{}
		for _, tg := range ts {
			health[tg.Job] = tg.Health
		}
		if health["served"] != "up" || health["gone"] != "down" {
			return fmt.Errorf("targets %v, want served up and gone down", health)
		}
		return nil
	})
	got, err := p.Query(ctx, `promtest_answer{job="served"}`, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Value != 42 || got[0].Labels["job"] != "served" {
		t.Fatalf("promtest_answer = %+v, want one sample of 42 from job served", got)
	}
	promtest.Eventually(t, time.Minute, "the rule fires", func() error {
		rs, err := p.Rules(ctx)
		if err != nil {
			return err
		}
		if len(rs) != 1 || rs[0].Name != "Answered" || rs[0].Health != "ok" || rs[0].State != "firing" {
			return fmt.Errorf("rules %+v, want Answered ok and firing", rs)
		}
		return nil
	})
}

// TestCheckMetrics: promtool's linter passes a clean exposition and names the problem in a
// faulty one.
func TestCheckMetrics(t *testing.T) {
	clean := "# HELP jobs_total Jobs done.\n# TYPE jobs_total counter\njobs_total 3\n"
	if p := promtest.CheckMetrics(t, []byte(clean)); len(p) != 0 {
		t.Errorf("clean exposition: %v", p)
	}
	faulty := clean + "# TYPE queue_length gauge\nqueue_length 2\n" // no HELP
	p := promtest.CheckMetrics(t, []byte(faulty))
	if len(p) != 1 || !strings.Contains(p[0], "queue_length") {
		t.Errorf("faulty exposition: %v, want one problem naming queue_length", p)
	}
}
