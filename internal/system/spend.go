package system

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
)

// SpendMetrics exports what the fleet costs now and where each budget stands, read from the
// budgets' ledger and gate at each scrape, so Prometheus sees the same numbers the arbiter
// judges plans on (as OpenCost and Karpenter export theirs). Register it where the program
// serves its metrics: SpendMetrics(sys.Budgets).
func SpendMetrics(b *arbiter.Budgets) prometheus.Collector { return spendMetrics{b} }

type spendMetrics struct {
	budgets *arbiter.Budgets
}

var (
	spendPerHour = prometheus.NewDesc("bursar_spend_usd_per_hour",
		"What the replicas running now cost per hour (ready replicas times their offer's price), by workload, location and market.",
		[]string{"workload", "location", "market"}, nil)
	budgetSpend = prometheus.NewDesc("bursar_budget_spend_usd",
		"A budget policy's spend in its current period: actual so far, or forecast to the period's end at the current burn. Exported by the leading arbiter.",
		[]string{"policy", "basis"}, nil)
	budgetLimit = prometheus.NewDesc("bursar_budget_limit_usd",
		"A budget policy's limit for its period.", []string{"policy"}, nil)
	budgetBurn = prometheus.NewDesc("bursar_budget_burn_usd_per_hour",
		"What a budget policy's scope costs per hour now.", []string{"policy"}, nil)
)

func (m spendMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{spendPerHour, budgetSpend, budgetLimit, budgetBurn} {
		ch <- d
	}
}

func (m spendMetrics) Collect(ch chan<- prometheus.Metric) {
	statuses, running := m.budgets.Position()
	for k, v := range perHour(running) {
		ch <- prometheus.MustNewConstMetric(spendPerHour, prometheus.GaugeValue, v, k.workload, k.location, k.market)
	}
	for _, s := range statuses {
		name := s.Policy.Name
		ch <- prometheus.MustNewConstMetric(budgetSpend, prometheus.GaugeValue, s.Spend.Actual, name, "actual")
		ch <- prometheus.MustNewConstMetric(budgetSpend, prometheus.GaugeValue, s.Spend.Forecast, name, "forecast")
		ch <- prometheus.MustNewConstMetric(budgetLimit, prometheus.GaugeValue, s.Policy.Limit, name)
		ch <- prometheus.MustNewConstMetric(budgetBurn, prometheus.GaugeValue, s.Spend.BurnPerHour, name)
	}
}

type spendKey struct{ workload, location, market string }

// perHour sums the running intervals' cost per hour by workload, location and market (one
// workload may run on several offers of a location and market).
func perHour(running []budget.Interval) map[spendKey]float64 {
	out := map[spendKey]float64{}
	for _, iv := range running {
		n := max(iv.Count, 1)
		out[spendKey{iv.Workload, iv.Location, iv.Market}] += iv.USDPerHour * float64(n)
	}
	return out
}
