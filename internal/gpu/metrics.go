package gpu

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the GPU telemetry's Prometheus series: whether NVML opened on this node, how the
// sweeps go and how many GPUs the last one read, so a node that lost its driver or a GPU shows.
// A nil *Metrics records nothing.
type Metrics struct {
	available prometheus.Gauge
	sweeps    *prometheus.CounterVec
	devices   prometheus.Gauge
	published prometheus.Counter
}

// NewMetrics registers the series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		available: prometheus.NewGauge(prometheus.GaugeOpts{Name: "bursar_gpu_nvml_available",
			Help: "1 when NVML opened on this node, 0 when GPU telemetry is off."}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_gpu_sweeps_total",
			Help: "Sweeps over the node's GPUs, by outcome (ok, partial: some GPUs unread or invalid, failed: nothing published)."},
			[]string{"outcome"}),
		devices: prometheus.NewGauge(prometheus.GaugeOpts{Name: "bursar_gpu_devices",
			Help: "GPUs whose sample the last sweep published."}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "bursar_gpu_samples_published_total",
			Help: "gpu.sample events published."}),
	}
	reg.MustRegister(m.available, m.sweeps, m.devices, m.published)
	return m
}

func (m *Metrics) opened(ok bool) {
	if m == nil {
		return
	}
	v := 0.0
	if ok {
		v = 1
	}
	m.available.Set(v)
}

// sweep records one sweep that published n samples and ended with err.
func (m *Metrics) sweep(n int, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	switch {
	case n == 0:
		outcome = "failed"
	case err != nil:
		outcome = "partial"
	}
	m.sweeps.WithLabelValues(outcome).Inc()
	m.devices.Set(float64(n))
	m.published.Add(float64(n))
}
