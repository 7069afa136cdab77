package health_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/health"
)

// TestRecorderCheck: readiness fails once the recorder's inserts have failed for longer than the
// grace, naming the stream and its lag, and holds again when they recover. A blip within the
// grace does not fail it.
func TestRecorderCheck(t *testing.T) {
	reg := prometheus.NewRegistry()
	up := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_recorder_clickhouse_up"}, []string{"stream"})
	lag := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_recorder_lag_messages"}, []string{"stream"})
	reg.MustRegister(up, lag)
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	check := []health.Check{health.Recorder(reg, 30*time.Second, func() time.Time { return now })}
	ready := func() error { return health.Ready(context.Background(), check) }

	up.WithLabelValues("MARKET").Set(1)
	if err := ready(); err != nil {
		t.Fatalf("inserts succeeding: %v", err)
	}
	up.WithLabelValues("TELEMETRY").Set(0) // a read-only data dir
	lag.WithLabelValues("TELEMETRY").Set(152)
	if err := ready(); err != nil {
		t.Errorf("failing for less than the grace: %v", err)
	}
	now = now.Add(31 * time.Second)
	err := ready()
	if err == nil {
		t.Fatal("inserts failing for 31s, and still ready")
	}
	for _, want := range []string{"recorder", "TELEMETRY", "152"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "MARKET") {
		t.Errorf("err names the healthy stream: %v", err)
	}
	up.WithLabelValues("TELEMETRY").Set(1)
	if err := ready(); err != nil {
		t.Errorf("recovered: %v", err)
	}
	up.WithLabelValues("TELEMETRY").Set(0) // failing again: timed afresh
	now = now.Add(time.Second)
	if err := ready(); err != nil {
		t.Errorf("failing again for less than the grace: %v", err)
	}
}
