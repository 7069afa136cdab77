package tokens

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/events"
)

// Metrics are the token scrapers' Prometheus series, per target (workload and replica): scrapes
// by outcome, the time of the last one published and counter resets, so a replica whose server
// stopped answering, or restarts often, shows. A nil *Metrics records nothing.
type Metrics struct {
	scrapes     *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
	resets      *prometheus.CounterVec
}

// NewMetrics registers the series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"workload", "replica"}
	m := &Metrics{
		scrapes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_tokens_scrapes_total",
			Help: "Scrapes of an inference server's metrics, by outcome (ok, error: unreachable or unreadable, publish_error)."},
			append(labels, "outcome")),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_tokens_last_success_timestamp_seconds",
			Help: "Unix time of the last tokens.sample published for a replica."}, labels),
		resets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_tokens_counter_resets_total",
			Help: "Times a replica's token counters went down (its server restarted)."}, labels),
	}
	reg.MustRegister(m.scrapes, m.lastSuccess, m.resets)
	return m
}

func (m *Metrics) scraped(t Target, outcome string) {
	if m != nil {
		m.scrapes.WithLabelValues(t.Workload, t.Replica, outcome).Inc()
	}
}

func (m *Metrics) published(e *events.TokensSample) {
	if m == nil {
		return
	}
	m.scrapes.WithLabelValues(e.Workload, e.Replica, "ok").Inc()
	m.lastSuccess.WithLabelValues(e.Workload, e.Replica).Set(float64(e.At.UnixNano()) / 1e9)
	if e.Reset {
		m.resets.WithLabelValues(e.Workload, e.Replica).Inc()
	}
}
