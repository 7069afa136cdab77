package report

import (
	"io"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestServeCountsRunsInMetrics: each scheduled report counts under its outcome, and the one
// that ran carries the run's time as its last success; the one that failed has none.
func TestServeCountsRunsInMetrics(t *testing.T) {
	s := scheduler(t, "cost", "nonsense")
	s.Out, s.Metrics = io.Discard, NewServeMetrics(prometheus.NewRegistry())
	if err := s.Once(ctxT(t), at("12:30")); err == nil {
		t.Fatal("Once hid the failed report")
	}
	for _, tt := range []struct {
		report, outcome string
		want            float64
	}{{"cost", "ok", 1}, {"cost", "failed", 0}, {"nonsense", "failed", 1}, {"nonsense", "ok", 0}} {
		if got := testutil.ToFloat64(s.Metrics.runs.WithLabelValues(tt.report, tt.outcome)); got != tt.want {
			t.Errorf("bursar_report_runs_total{%s,%s} = %v, want %v", tt.report, tt.outcome, got, tt.want)
		}
	}
	if got := testutil.ToFloat64(s.Metrics.lastSuccess.WithLabelValues("cost")); got != float64(at("12:30").Unix()) {
		t.Errorf("last success of cost = %v, want %v", got, at("12:30").Unix())
	}
	if n := testutil.CollectAndCount(s.Metrics.lastSuccess); n != 1 {
		t.Errorf("%d reports have a last success, want 1 (cost)", n)
	}
}
