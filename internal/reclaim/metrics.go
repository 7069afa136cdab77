package reclaim

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/events"
)

// Metrics are the reclaim watchers' Prometheus series: whether each watcher reaches its
// metadata service, and the notices it published. A watcher that cannot poll is the silent
// failure here (a reclaim goes unseen), so its failures in a row are a gauge to alert on.
// A nil *Metrics records nothing.
type Metrics struct {
	polls       *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
	failing     *prometheus.GaugeVec
	published   *prometheus.CounterVec
}

// NewMetrics registers the series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_reclaim_polls_total",
			Help: "Polls of a reclaim watcher's metadata service or queue, by outcome (ok, error)."}, []string{"watcher", "outcome"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_reclaim_last_success_timestamp_seconds",
			Help: "Unix time of a reclaim watcher's last successful poll."}, []string{"watcher"}),
		failing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_reclaim_failures_in_a_row",
			Help: "Failed polls in a row of a reclaim watcher; 0 while it reaches its source."}, []string{"watcher"}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_reclaim_notices_published_total",
			Help: "capacity.reclaimed events published, by provider and kind."}, []string{"provider", "kind"}),
	}
	reg.MustRegister(m.polls, m.lastSuccess, m.failing, m.published)
	return m
}

func (m *Metrics) poll(watcher string, failures int, at time.Time) {
	if m == nil {
		return
	}
	m.failing.WithLabelValues(watcher).Set(float64(failures))
	if failures > 0 {
		m.polls.WithLabelValues(watcher, "error").Inc()
		return
	}
	m.polls.WithLabelValues(watcher, "ok").Inc()
	m.lastSuccess.WithLabelValues(watcher).Set(float64(at.UnixNano()) / 1e9)
}

func (m *Metrics) notice(e *events.CapacityReclaimed) {
	if m == nil {
		return
	}
	m.published.WithLabelValues(e.Provider, string(e.Kind)).Inc()
}
