package anomalywatch

import "github.com/prometheus/client_golang/prometheus"

// metrics say what the watcher finds and whether it gets it out.
type metrics struct {
	open    prometheus.Gauge       // anomalies open now in the scopes watched
	changes *prometheus.CounterVec // changes published (acked), by state
	posts   *prometheus.CounterVec // opens told to people, by outcome
	unsent  prometheus.Gauge       // changes waiting for JetStream
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{Name: "bursar_cost_anomalies_open",
			Help: "Cost anomalies open now in the scopes this arbiter watches (workloads, teams, budgets)."}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_cost_anomaly_events_total",
			Help: "cost.anomaly events published and acked, by state (open, update, closed)."}, []string{"state"}),
		posts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_cost_anomaly_posts_total",
			Help: "Anomalies opened, by what came of telling people: posted, quieted (cause answered expected) or failed."},
			[]string{"outcome"}),
		unsent: prometheus.NewGauge(prometheus.GaugeOpts{Name: "bursar_cost_anomaly_unsent",
			Help: "cost.anomaly events waiting to be published (JetStream did not ack them yet)."}),
	}
	if reg != nil {
		reg.MustRegister(m.open, m.changes, m.posts, m.unsent)
	}
	return m
}
