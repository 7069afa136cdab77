package anomaly

import (
	"math"
	"time"
)

// baseline is the expectation of a series' next step. It has two candidates and follows the one
// that has predicted the last day better (smaller mean absolute error): the seasonal median
// (same time of day or week) shifted by the recent level, and the rolling median of the last
// hour, for series whose days do not repeat. It keeps the last 4 weeks of values (the observed
// ones, or the expected ones in their place while an anomaly is held out).
type baseline struct {
	perDay int
	hist   window
	level  window // seasonal residuals of the last 2 hours
	// errSeasonal and errRolling are each candidate's absolute errors over the last day.
	errSeasonal, errRolling window
}

func newBaseline(step time.Duration) baseline {
	perDay := int(24 * time.Hour / step)
	return baseline{perDay: perDay, hist: window{n: 28 * perDay}, level: window{n: perDay / 12},
		errSeasonal: window{n: perDay}, errRolling: window{n: perDay}}
}

// seasonSlack is how many steps either side of the same time of day or week are pooled: ±10
// minutes at 5-minute steps, so that a replay's schedule jitter does not miss its season.
const seasonSlack = 2

// push records the next step's value v (observed, or the baseline while held out) and scores
// both candidates on it.
func (b *baseline) push(v float64) {
	raw, lvl, roll := b.seasonal(), b.levelShift(), b.rolling()
	b.hist.push(v)
	if math.IsNaN(raw) {
		return
	}
	b.level.push(v - raw)
	b.errSeasonal.push(math.Abs(v - math.Max(raw+lvl, 0)))
	b.errRolling.push(math.Abs(v - roll))
}

// expected is the baseline for the next step (NaN under an hour of history).
func (b *baseline) expected() float64 {
	raw := b.seasonal()
	if math.IsNaN(raw) {
		return raw
	}
	seasonal := math.Max(raw+b.levelShift(), 0)
	if len(b.errSeasonal.values) < b.perDay/4 || sum(b.errSeasonal.last()) <= sum(b.errRolling.last()) {
		return seasonal
	}
	return b.rolling()
}

func (b *baseline) levelShift() float64 {
	if l := b.level.last(); len(l) > 0 {
		return median(l)
	}
	return 0
}

// rolling is the median of the last hour.
func (b *baseline) rolling() float64 {
	h := b.hist.values
	n := b.perDay / 24
	if len(h) < n {
		return math.NaN()
	}
	return median(h[len(h)-n:])
}

// seasonal is the median of the same time of week over up to 4 weeks once 2 weeks are known,
// else of the same time of day over up to 7 days once a day is known, else of the last hour
// (NaN under an hour).
func (b *baseline) seasonal() float64 {
	h := b.hist.values
	i := len(h) // the index of the next step
	switch {
	case i >= 14*b.perDay:
		return median(pool(h, i, 7*b.perDay, 4))
	case i >= b.perDay:
		return median(pool(h, i, b.perDay, 7))
	}
	return b.rolling()
}

// pool gathers h[i - k·period + j] for k = 1..periods and |j| <= seasonSlack, where it exists.
func pool(h []float64, i, period, periods int) []float64 {
	var out []float64
	for k := 1; k <= periods; k++ {
		c := i - k*period
		for j := -seasonSlack; j <= seasonSlack; j++ {
			if c+j >= 0 && c+j < len(h) {
				out = append(out, h[c+j])
			}
		}
	}
	return out
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
