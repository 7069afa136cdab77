package cli

import (
	"cmp"
	"context"
	"log/slog"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/bursar-dev/bursar/internal/health"
)

// NewRegistry returns a registry with the Go and process collectors and bursar_build_info, for
// one program's metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo())
	return reg
}

// buildInfo is the constant 1 labelled with the version the release stamped (Version), the
// commit the binary was built from and the Go release, so a dashboard can tell which build runs.
func buildInfo() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "bursar_build_info",
		Help:        "Always 1; the labels say which build of Bursar runs.",
		ConstLabels: prometheus.Labels{"version": Version, "revision": cmp.Or(revision(), "unknown"), "goversion": runtime.Version()}})
	g.Set(1)
	return g
}

// ServeMetrics serves /metrics, /livez and /readyz from reg on addr until ctx ends, ready
// whenever it serves (health.Serve with no checks). An empty addr serves nothing.
func ServeMetrics(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) error {
	return health.Serve(ctx, addr, reg, nil, log)
}
