package anomaly

import (
	"math"
	"time"
)

// baseline is the seasonal expectation of a series. It keeps the last 4 weeks of values (the
// observed ones, or the expected ones in their place while an anomaly is held out) and the
// residuals of the last 2 hours, for the level shift.
type baseline struct {
	perDay int
	hist   window
	level  window
}

func newBaseline(step time.Duration) baseline {
	perDay := int(24 * time.Hour / step)
	return baseline{perDay: perDay, hist: window{n: 28 * perDay}, level: window{n: 2 * perDay / 24}}
}

// seasonSlack is how many steps either side of the same time of day or week are pooled: ±10
// minutes at 5-minute steps, so that a replay's schedule jitter does not miss its season.
const seasonSlack = 2

// push records the next step's value v (observed, or the baseline while held out); its residual
// from the seasonal median moves the level.
func (b *baseline) push(v float64) {
	raw := b.seasonal()
	b.hist.push(v)
	if !math.IsNaN(raw) {
		b.level.push(v - raw)
	}
}

// expected is the baseline for the next step: the seasonal median plus the recent level.
func (b *baseline) expected() float64 {
	raw := b.seasonal()
	if math.IsNaN(raw) {
		return raw
	}
	if l := b.level.last(); len(l) > 0 {
		raw += median(l)
	}
	return math.Max(raw, 0)
}

// seasonal is the median of the same time of week over up to 4 weeks once 2 weeks are known,
// else of the same time of day over up to 7 days once a day is known, else of the last hour
// (NaN under an hour).
func (b *baseline) seasonal() float64 {
	h := b.hist.values
	i := len(h) // the index of the next step
	hourSteps := b.perDay / 24
	switch {
	case i >= 14*b.perDay:
		return median(pool(h, i, 7*b.perDay, 4))
	case i >= b.perDay:
		return median(pool(h, i, b.perDay, 7))
	case i >= hourSteps:
		return median(h[i-hourSteps:])
	}
	return math.NaN()
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
