package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/health/healthtest"
)

// TestRunProbesFollowTheBus runs the collector against a real NATS server that goes away and
// comes back: /readyz falls while it is away and rises when it is back; /livez and /metrics
// (with bursar_build_info) answer on the same port.
func TestRunProbesFollowTheBus(t *testing.T) {
	env := bustest.Start(t)
	page := readShared(t, "provider-formats/fixtures/vllm-metrics.txt")
	vllm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(page) }))
	t.Cleanup(vllm.Close)
	config := filepath.Join(t.TempDir(), "collector.yaml")
	writeFile(t, config, `
location: aws-use1
node: node-a
scrape:
  interval: 1h
  targets:
    - {url: "`+vllm.URL+`/metrics", server: vllm, workload: llama-8b, replica: llama-8b-0}
`)
	addr := healthtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runCollector(ctx, &cli.Globals{NATS: env.URL}, runOptions{config: config, metricsListen: addr},
			slog.New(slog.DiscardHandler), runDeps{})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + addr
	healthtest.Await(t, base+"/readyz", http.StatusOK)
	_, body := healthtest.Get(base + "/metrics")
	for _, want := range []string{"bursar_build_info{", "bursar_tokens_scrapes_total{"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
	env.Restart(t, func() {
		healthtest.Await(t, base+"/readyz", http.StatusServiceUnavailable)
		// The first answer may come from a probe begun while the server was going; by the next,
		// the client has seen the connection drop.
		if code, body := healthtest.Get(base + "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "nats:") {
			t.Errorf("/readyz with NATS away = %d %q, want 503 naming the nats check", code, body)
		}
		healthtest.Await(t, base+"/livez", http.StatusOK)
	})
	healthtest.Await(t, base+"/readyz", http.StatusOK)
}
