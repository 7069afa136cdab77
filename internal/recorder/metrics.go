package recorder

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	lag      *prometheus.GaugeVec
	up       *prometheus.GaugeVec
	rows     *prometheus.CounterVec
	acked    *prometheus.CounterVec
	dead     *prometheus.CounterVec
	failures *prometheus.CounterVec
	restarts *prometheus.CounterVec
	split    *prometheus.CounterVec
	refused  *prometheus.CounterVec
}

const restartsHelp = "Reads of a stream started over, by cause: stalled (the consumer held messages nobody pulled: a lost pull request), " +
	"lost_delivery (a delivery lost on its way), behind (the stream lost messages the consumer had read: a damaged store), " +
	"renumbered (the stream numbered new messages with sequences the consumer had read: a damaged store)."

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_recorder_lag_messages",
			Help: "Messages in the stream not yet committed to ClickHouse."}, []string{"stream"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_recorder_clickhouse_up",
			Help: "1 while inserts succeed, 0 while they are failing and being retried."}, []string{"stream"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_recorder_rows_total",
			Help: "Rows committed to ClickHouse (deduplicated repeats included)."}, []string{"table"}),
		acked: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_recorder_acked_messages_total",
			Help: "Messages acked after their batch committed."}, []string{"stream"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_recorder_dead_messages_total",
			Help: "Messages sent to DLQ because they could not be decoded or stored."}, []string{"stream"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_recorder_insert_failures_total",
			Help: "Failed attempts to insert into ClickHouse or store a dead message."}, []string{"stream"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_recorder_restarts_total",
			Help: restartsHelp}, []string{"stream", "cause"}),
		split: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_recorder_refused_batches_total",
			Help: "Batches ClickHouse refused for their rows (a value it cannot read or hold), split to store the others."}, []string{"stream"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_recorder_refused_messages_total",
			Help: "Messages sent to DLQ because ClickHouse refused their rows; the rest of their batch was stored."}, []string{"stream"}),
	}
	if reg != nil {
		reg.MustRegister(m.lag, m.up, m.rows, m.acked, m.dead, m.failures, m.restarts, m.split, m.refused)
	}
	return m
}

// restarted counts a stream's read started over for c (nothing when the recorder starts).
func (m *metrics) restarted(stream string, c cause) {
	if c != causeNone {
		m.restarts.WithLabelValues(stream, string(c)).Inc()
	}
}
