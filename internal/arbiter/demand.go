package arbiter

import (
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// A serving workload's demand history: the market keeps, for each workload sized by throughput,
// its demand one value a minute by the samples' own times, and a forecaster fed with it
// (placement.Forecaster). The samples come from the telemetry stream, which keeps a day of them:
// a starting arbiter reads back DemandLookback of them (Options), so a restart rebuilds the day's
// shape instead of forgetting it.

// demandStep is the step a workload's demand history is kept at, as SERVING.md's tick.
const demandStep = time.Minute

// demandSeason is the forecaster's season: demand follows the day.
const demandSeason = 24 * time.Hour

// demandSeries is one workload's demand history, as its forecaster holds it. A workload the
// fleet does not size by throughput (or does not name) gets a series with no forecaster, so its
// samples cost a map lookup, not a search of the fleet's workloads.
type demandSeries struct {
	w    *fleet.Workload
	open time.Time // start of the step being filled; zero before the first sample
	f    *placement.Forecaster
}

// stepDemand closes each of the named workload's steps that ended by at, once the sample at at is
// folded (a sample's rate is what was served since the one before, so it belongs to the step it
// ends): a closed step's demand is the sum of the workload's replica rates current at its end, so
// a replica that stopped reporting drops out after staleAfter and a silent workload reads 0. A gap
// longer than a season restarts the history at at. It holds tmu.
func (m *market) stepDemand(workload string, at time.Time) {
	s := m.series[workload]
	if s == nil {
		s = &demandSeries{}
		if w, ok := m.cfg.Workload(workload); ok && w.SizedByThroughput() {
			s.w, s.f = w, placement.NewForecaster(placement.Steps(demandSeason, demandStep), placement.Steps(w.ColdStart, demandStep))
		}
		m.series[workload] = s
	}
	if s.f == nil {
		return
	}
	w := s.w
	step := at.Truncate(demandStep)
	switch {
	case s.open.IsZero() || step.Sub(s.open) > demandSeason:
		s.open = step
		return
	case !step.After(s.open):
		return
	}
	for ; s.open.Before(step); s.open = s.open.Add(demandStep) {
		end := s.open.Add(demandStep)
		total, _ := m.sumRates(w, end)
		s.f.Observe(total)
	}
}

// sumRates is workload w's demand at now in its scaling metric's unit: the rates of its replicas
// with a current sample, and whether any had one. It holds tmu.
func (m *market) sumRates(w *fleet.Workload, now time.Time) (total float64, seen bool) {
	for _, r := range m.byWorkload[w.Name] {
		if !current(r.at, now) {
			continue
		}
		seen = true
		switch w.Scaling.Metric {
		case fleet.MetricTokens:
			total += r.tokPerS
		case fleet.MetricOutputTokens:
			total += r.genPerS
		default:
			total += r.reqPerS
		}
	}
	return total, seen
}

// demandRate is the rate w's warm capacity is sized for now, for a workload sized by throughput:
// the current rate, or what its forecaster expects over the next cold start if more (with the
// headroom its availability target asks for, where it states one). mape is
// the forecaster's error at that horizon (n forecasts measured; 0 until one is). ok is false for
// a workload not sized by throughput or without a current sample.
func (m *market) demandRate(w *fleet.Workload, now time.Time) (rate, mape float64, n int, ok bool) {
	if !w.SizedByThroughput() {
		return 0, 0, 0, false
	}
	m.tmu.Lock()
	defer m.tmu.Unlock()
	rate, ok = m.sumRates(w, now)
	if s := m.series[w.Name]; s != nil && s.f != nil {
		expect := s.f.Expect()
		if target, has := w.AvailabilityTarget(); has {
			// The forecast's headroom covers all but the target's demand share of its misses.
			expect = s.f.ExpectWithin(placement.DemandShare(target))
		}
		rate = max(rate, expect)
		mape, n = s.f.MAPE()
		ok = ok || rate > 0
	}
	return rate, mape, n, ok
}
