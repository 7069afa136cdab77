package promtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

	p := promtest.Start(t, time.Second,
		promtest.Job{Name: "served", Targets: []string{strings.TrimPrefix(srv.URL, "http://")}},
		promtest.Job{Name: "gone", Targets: []string{strings.TrimPrefix(gone.URL, "http://")}})
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
