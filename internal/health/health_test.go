package health_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/health"
	"github.com/bursar-dev/bursar/internal/health/healthtest"
)

func check(name string, err error) health.Check {
	return health.Check{Name: name, Run: func(context.Context) error { return err }}
}

func TestHandlerAnswersEachPath(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "bursar_test_total", Help: "a test series"}))
	tests := []struct {
		name     string
		path     string
		checks   []health.Check
		wantCode int
		wantBody []string
	}{
		{"live with failing checks", "/livez", []health.Check{check("nats", errors.New("down"))}, 200, []string{"ok"}},
		{"ready with no checks", "/readyz", nil, 200, []string{"ok"}},
		{"ready when every check holds", "/readyz", []health.Check{check("nats", nil), check("store", nil)}, 200, []string{"ok"}},
		{"not ready names each failure", "/readyz", []health.Check{check("nats", errors.New("connection is CLOSED")),
			check("store", nil), check("arbiter", errors.New("starting"))}, 503,
			[]string{"nats: connection is CLOSED", "arbiter: starting"}},
		{"metrics", "/metrics", nil, 200, []string{"bursar_test_total 0"}},
		{"unknown path", "/healthz", nil, 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			health.Handler(reg, tt.checks).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.wantCode {
				t.Errorf("GET %s = %d, want %d (%s)", tt.path, rec.Code, tt.wantCode, rec.Body)
			}
			for _, w := range tt.wantBody {
				if !strings.Contains(rec.Body.String(), w) {
					t.Errorf("GET %s body %q lacks %q", tt.path, rec.Body, w)
				}
			}
		})
	}
}

// TestReadinessFollowsTheBus serves the NATS and streams checks of a real server, stops the
// server and starts it again: /readyz falls while it is away and rises once it is back, and
// /livez answers throughout.
func TestReadinessFollowsTheBus(t *testing.T) {
	env := bustest.Start(t)
	nc, js := env.ConnectAs(t, bus.RoleCollector)
	addr := healthtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- health.Serve(ctx, addr, prometheus.NewRegistry(),
			[]health.Check{health.NATS(nc), health.Streams(js, bus.Market, bus.Telemetry)}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	base := "http://" + addr
	healthtest.Await(t, base+"/readyz", 200)
	env.Restart(t, func() {
		healthtest.Await(t, base+"/readyz", 503)
		// The first answer may come from a probe begun while the server was going; by the next,
		// the client has seen the connection drop.
		if code, body := healthtest.Get(base + "/readyz"); code != 503 || !strings.Contains(body, "nats:") {
			t.Errorf("readyz with the server down = %d %q, want 503 naming the nats check", code, body)
		}
		healthtest.Await(t, base+"/livez", 200)
	})
	healthtest.Await(t, base+"/readyz", 200)
}

func TestServeRefusesABusyAddressNamingTheFlag(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	err := health.Serve(context.Background(), strings.TrimPrefix(srv.URL, "http://"), prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "--metrics-listen") {
		t.Fatalf("Serve on a busy address = %v, want an error naming --metrics-listen", err)
	}
}
