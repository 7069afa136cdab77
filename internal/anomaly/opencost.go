package anomaly

import (
	"math"
	"time"
)

// OpenCostRule is the rule of the OpenCost anomaly proposal (opencost/opencost pull request
// #3978, "feat(anomaly): implement cost anomaly detection GET /anomaly API", issue #3979): each
// step's cost is compared with the previous lookback's steps (7 days by default), anomalies
// included; with the MAD algorithm (its default) a step is anomalous when its modified z-score
// 0.6745 × (cost − median) / MAD exceeds 3.5, with the z-score algorithm when (cost − mean) /
// standard deviation (sample) exceeds 3.0; when the spread is 0 any increase is anomalous; steps
// costing under minCost ($0.10) are skipped. The proposal reports each step alone; here a run of
// anomalous steps is one anomaly (opened at its first step, closed at the first normal one), which
// only spares it alerts. Its default step is a day; it is applied at the series' step.
type OpenCostRule struct {
	key       string
	step      time.Duration
	zscore    bool
	threshold float64
	minCost   float64
	hist      window
	open      *Anomaly
}

var _ Detector = (*OpenCostRule)(nil)

// NewOpenCostMAD is the proposal's default: rolling MAD, threshold 3.5, 7-day lookback.
func NewOpenCostMAD(key string, step time.Duration) *OpenCostRule {
	return &OpenCostRule{key: key, step: step, threshold: 3.5, minCost: 0.10, hist: window{n: int(7 * 24 * time.Hour / step)}}
}

// NewOpenCostZ is the proposal's z-score algorithm: threshold 3.0, 7-day lookback.
func NewOpenCostZ(key string, step time.Duration) *OpenCostRule {
	r := NewOpenCostMAD(key, step)
	r.zscore, r.threshold = true, 3.0
	return r
}

// Observe takes the next step.
func (r *OpenCostRule) Observe(p Point) []Event {
	if math.IsNaN(p.USDPerHour) || math.IsInf(p.USDPerHour, 0) {
		return nil // a gap, as Seasonal skips it
	}
	hist := r.hist.last()
	r.hist.push(p.USDPerHour)
	cost := p.USDPerHour * r.step.Hours()
	if len(hist) < 2 {
		return nil
	}
	base, flagged := r.judge(hist, p.USDPerHour)
	flagged = flagged && cost >= r.minCost
	end := p.At.Add(r.step)
	excess := (p.USDPerHour - base) * r.step.Hours()
	switch {
	case r.open != nil && flagged:
		r.open.ObservedUSDPerHour, r.open.ExpectedUSDPerHour = p.USDPerHour, base
		r.open.ImpactUSD += excess
		return []Event{{Updated, *r.open}}
	case r.open != nil:
		a := *r.open
		a.End = p.At
		r.open = nil
		return []Event{{Closed, a}}
	case flagged:
		r.open = &Anomaly{Series: r.key, Start: p.At, DetectedAt: end, ExpectedUSDPerHour: base,
			ObservedUSDPerHour: p.USDPerHour, ImpactUSD: excess}
		return []Event{{Opened, *r.open}}
	}
	return nil
}

// judge is the proposal's test of value v against the history: the baseline and the verdict.
func (r *OpenCostRule) judge(hist []float64, v float64) (float64, bool) {
	if r.zscore {
		m, sd := meanStd(hist)
		sd *= math.Sqrt(float64(len(hist)) / float64(len(hist)-1)) // the proposal's sample deviation
		if sd == 0 {
			return m, v > m
		}
		return m, (v-m)/sd > r.threshold
	}
	m := median(hist)
	d := mad(hist, m)
	if d == 0 {
		return m, v > m
	}
	return m, 0.6745*(v-m)/d > r.threshold
}
