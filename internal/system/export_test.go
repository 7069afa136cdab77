package system

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/arbiter"
)

// SpendMetricsAt is SpendMetrics reading the time from now, for tests on a clock of their own.
func SpendMetricsAt(b *arbiter.Budgets, now func() time.Time) prometheus.Collector {
	return newSpendMetrics(b, now)
}
