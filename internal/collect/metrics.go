package collect

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// Metrics are the collector's per-source Prometheus series. A nil *Metrics records nothing.
type Metrics struct {
	lastSuccess *prometheus.GaugeVec
	offers      *prometheus.GaugeVec
	errors      *prometheus.CounterVec
	unknown     *prometheus.GaugeVec
	skipped     *prometheus.GaugeVec
	stale       *prometheus.GaugeVec
	published   *prometheus.CounterVec
}

// NewMetrics registers the series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_price_source_last_success_timestamp_seconds",
			Help: "Unix time of the last successful fetch of a price source."}, []string{"source"}),
		offers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_price_source_offers",
			Help: "Offers in the last good catalog of a price source."}, []string{"source"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_price_source_errors_total",
			Help: "Failed fetch attempts of a price source, by kind (auth, rate_limited, server, decode, invalid, ...)."},
			[]string{"source", "kind"}),
		unknown: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_price_source_unknown_gpu_rows",
			Help: "Rows of the last fetch whose GPU name has no canonical mapping, by name."}, []string{"source", "name"}),
		skipped: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_price_source_skipped_rows",
			Help: "Rows of the last fetch left out, by reason."}, []string{"source", "reason"}),
		stale: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_price_source_stale",
			Help: "1 when a price source has failed enough runs in a row to be stale."}, []string{"source"}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_price_events_published_total",
			Help: "price.observed events published for a source."}, []string{"source"}),
	}
	reg.MustRegister(m.lastSuccess, m.offers, m.errors, m.unknown, m.skipped, m.stale, m.published)
	return m
}

func (m *Metrics) success(source string, at time.Time, cat pricing.Catalog) {
	if m == nil {
		return
	}
	m.lastSuccess.WithLabelValues(source).Set(float64(at.UnixNano()) / 1e9)
	m.offers.WithLabelValues(source).Set(float64(len(cat.Offers)))
	m.unknown.DeletePartialMatch(prometheus.Labels{"source": source})
	for name, n := range cat.Unknown {
		m.unknown.WithLabelValues(source, name).Set(float64(n))
	}
	m.skipped.DeletePartialMatch(prometheus.Labels{"source": source})
	for reason, n := range cat.Skipped {
		m.skipped.WithLabelValues(source, reason).Set(float64(n))
	}
}

func (m *Metrics) failure(source, kind string) {
	if m == nil {
		return
	}
	m.errors.WithLabelValues(source, kind).Inc()
}

func (m *Metrics) setStale(source string, stale bool) {
	if m == nil {
		return
	}
	v := 0.0
	if stale {
		v = 1
	}
	m.stale.WithLabelValues(source).Set(v)
}

func (m *Metrics) addPublished(source string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.published.WithLabelValues(source).Add(float64(n))
}
