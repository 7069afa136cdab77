package system

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
)

// SpendMetrics exports what the fleet costs now and where each budget stands, read from the
// budgets' ledger and gate at each scrape, so Prometheus sees the same numbers the arbiter
// judges plans on (as OpenCost and Karpenter export theirs), and what it has spent since this
// process started, a counter a platform engineer can sum over any window
// (increase(bursar_spend_usd_total[1d])), which a sampled per-hour gauge cannot give exactly.
// Register it where the program serves its metrics: SpendMetrics(sys.Budgets).
func SpendMetrics(b *arbiter.Budgets) prometheus.Collector {
	return newSpendMetrics(b, func() time.Time { return time.Now().UTC() })
}

func newSpendMetrics(b *arbiter.Budgets, now func() time.Time) *spendMetrics {
	return &spendMetrics{budgets: b, now: now, upTo: now(), spent: map[spendKey]float64{}}
}

type spendMetrics struct {
	budgets *arbiter.Budgets
	now     func() time.Time

	mu    sync.Mutex // scrapes may come at once
	upTo  time.Time  // spent holds the spend up to here
	spent map[spendKey]float64
}

var (
	spendPerHour = prometheus.NewDesc("bursar_spend_usd_per_hour",
		"What the replicas running now cost per hour (ready replicas times their offer's price), by workload, location and market.",
		[]string{"workload", "location", "market"}, nil)
	budgetSpend = prometheus.NewDesc("bursar_budget_spend_usd",
		"A budget policy's spend in its current period: actual so far, or forecast to the period's end (docs/forecasts.md). Exported by the leading arbiter.",
		[]string{"policy", "basis"}, nil)
	budgetLimit = prometheus.NewDesc("bursar_budget_limit_usd",
		"A budget policy's limit for its period.", []string{"policy"}, nil)
	budgetBurn = prometheus.NewDesc("bursar_budget_burn_usd_per_hour",
		"What a budget policy's scope costs per hour now.", []string{"policy"}, nil)
	spendTotal = prometheus.NewDesc("bursar_spend_usd_total",
		"What the ready replicas have cost since this arbiter started (ready replicas times their offer's price, "+
			"integrated over time, as report cost's estimate), by workload, location and market.",
		[]string{"workload", "location", "market"}, nil)
)

func (m *spendMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{spendPerHour, budgetSpend, budgetLimit, budgetBurn, spendTotal} {
		ch <- d
	}
}

func (m *spendMetrics) Collect(ch chan<- prometheus.Metric) {
	for k, v := range m.total() {
		ch <- prometheus.MustNewConstMetric(spendTotal, prometheus.CounterValue, v, k.workload, k.location, k.market)
	}
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

// total adds the spend since the last scrape to the counters and returns them.
func (m *spendMetrics) total() map[spendKey]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if now.After(m.upTo) {
		accrue(m.spent, m.budgets.Intervals(m.upTo), m.upTo, now)
		m.upTo = now
	}
	out := make(map[spendKey]float64, len(m.spent))
	for k, v := range m.spent {
		out[k] = v
	}
	return out
}

type spendKey struct{ workload, location, market string }

// accrue adds to spent what each interval cost between from and to: its replicas times its
// price, over the part of it inside [from, to) (an open interval, To zero, runs on). A
// replica.state that reaches the ledger after a scrape has counted past its time moves spend
// between neighbouring scrapes at most; the counters stay monotonic.
func accrue(spent map[spendKey]float64, ivs []budget.Interval, from, to time.Time) {
	for _, iv := range ivs {
		start, end := iv.From, iv.To
		if start.Before(from) {
			start = from
		}
		if end.IsZero() || end.After(to) {
			end = to
		}
		if !end.After(start) {
			continue
		}
		n := max(iv.Count, 1)
		spent[spendKey{iv.Workload, iv.Location, iv.Market}] += iv.USDPerHour * float64(n) * end.Sub(start).Hours()
	}
}

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
