package forecast

import (
	"math"
	"slices"
)

// valueFn turns the period totals of the series (one for a sum, two for a ratio) into the
// quantity forecast; NaN where it is undefined (a ratio over nothing).
type valueFn func(totals []float64) float64

// combine forecasts the period for the series together: the model's expected remainder of each,
// and the interval and error from backtesting the model on their history at the same horizon.
func combine(p Period, ss []*series, value valueFn) (Forecast, error) {
	s0 := ss[0]
	left := s0.endX - s0.nowX
	spent := make([]float64, len(ss))
	for k, s := range ss {
		spent[k] = s.spent()
	}
	f := Forecast{Spent: value(spent), Model: BurnRate, Interval: RangeSeen}
	f.Linear = value(carry(ss, spent, left, func(s *series) float64 { return s.rate(s.whole) }))
	if s0.whole < MinHistoryHours {
		f.Expected = f.Linear
		f.Low, f.High = rangeSeen(ss, spent, left, value)
		return f, nil
	}
	models := make([]model, len(ss))
	var expected [len(levelWindows)][]float64
	for w := range levelWindows {
		expected[w] = make([]float64, len(ss))
	}
	for k, s := range ss {
		models[k] = s.fit(s.whole)
		for w := range levelWindows {
			expected[w][k] = spent[k] + models[k].total(w, s.nowX, s.endX)
		}
	}
	f.Model = Daily
	if models[0].weekly {
		f.Model = Weekly
	}
	if left <= 0 {
		f.Expected = value(spent)
		f.Low, f.High, f.Interval = f.Expected, f.Expected, Backtested
		return f, nil
	}
	bt := backtest(ss, spent, expected, left, value)
	best := -1
	for w := range levelWindows {
		if len(bt.values[w]) == 0 {
			continue
		}
		if e := meanAbsPct(bt.values[w], value(expected[w])); best < 0 || e < f.ErrorPct {
			best, f.ErrorPct = w, e
		}
	}
	if best < 0 {
		f.Expected = value(expected[0])
		f.Low, f.High = rangeSeen(ss, spent, left, value)
		return f, nil
	}
	f.Expected, f.LevelHours = value(expected[best]), levelWindows[best]
	f.Low, f.High = quantile(bt.values[best], lowQ), quantile(bt.values[best], highQ)
	f.LinearErrorPct = meanAbsPct(bt.linear, f.Linear)
	f.Samples, f.Interval = len(bt.values[best]), bt.method
	return f, nil
}

// carry is spent plus each series' rate(s) for left hours.
func carry(ss []*series, spent []float64, left float64, rate func(*series) float64) []float64 {
	out := make([]float64, len(ss))
	for k, s := range ss {
		out[k] = spent[k] + rate(s)*left
	}
	return out
}

// rangeSeen is the interval under too short a history: the lowest and highest hourly rate seen
// (each hour's rates together, for a ratio), carried to the end.
func rangeSeen(ss []*series, spent []float64, left float64, value valueFn) (lo, hi float64) {
	if len(ss[0].v) == 0 { // nothing recorded yet
		x := value(spent)
		return x, x
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	n := ss[0].whole
	for i := range max(n, 1) {
		x := value(carry(ss, spent, left, func(s *series) float64 {
			if n == 0 { // a partial first hour: its rate so far
				return s.v[0] / math.Max(s.nowX, 1e-9)
			}
			return s.v[i]
		}))
		if !math.IsNaN(x) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if math.IsInf(lo, 1) {
		return math.NaN(), math.NaN()
	}
	return lo, hi
}

// trial is what backtesting gives: the period's total as it would come out if today's remainder
// were off as the forecast (and the burn rate) was at each origin.
type trial struct {
	values [len(levelWindows)][]float64 // by level window
	linear []float64
	method string
}

// backtest fits the model at every whole hour o of the history that leaves h hours after it, and
// compares what it expected for those h hours with what came, for each level window. Each origin's relative error is
// applied to today's expected remainder. Origins start where today's model starts (two weeks
// for the weekly one) when that leaves minSamples of them. Where the history holds fewer than
// minSamples origins, it backtests at the longest horizon that gives minSamples and widens the errors by
// √(left / that horizon) (Scaled).
func backtest(ss []*series, spent []float64, expected [len(levelWindows)][]float64, left float64, value valueFn) trial {
	n := ss[0].whole
	h := max(1, int(math.Round(left)))
	t := trial{method: Backtested}
	first := minTrainHours
	if n >= weeklyFrom && n-h-weeklyFrom+1 >= minSamples {
		first = weeklyFrom // the weekly model's own errors, not those of the daily one before it
	}
	widen := 1.0
	if n-h-first+1 < minSamples {
		short := n - first - minSamples + 1
		widen, h, t.method = math.Sqrt(left/float64(short)), short, Scaled
	}
	var got [len(levelWindows)][]float64
	var okF [len(levelWindows)]bool
	for w := range got {
		got[w] = make([]float64, len(ss))
	}
	lin := make([]float64, len(ss))
	for o := first; o+h <= n; o++ {
		for w := range okF {
			okF[w] = true
		}
		okL := true
		for k, s := range ss {
			came := s.cum[o+h] - s.cum[o]
			m := s.fit(o)
			for w := range levelWindows {
				fc := m.total(w, float64(o), float64(o+h))
				okF[w] = okF[w] && fc > 0
				if fc > 0 {
					got[w][k] = spent[k] + (expected[w][k]-spent[k])*math.Max(0, 1+widen*(came/fc-1))
				}
			}
			burn := s.rate(o) * float64(h)
			okL = okL && burn > 0
			if burn > 0 {
				lin[k] = spent[k] + s.rate(s.whole)*left*math.Max(0, 1+widen*(came/burn-1))
			}
		}
		for w := range levelWindows {
			if x := value(got[w]); okF[w] && finite(x) {
				t.values[w] = append(t.values[w], x)
			}
		}
		if x := value(lin); okL && finite(x) {
			t.linear = append(t.linear, x)
		}
	}
	return t
}

// finite says whether a trial's total is a number: an origin whose forecast was a few
// denormal cents makes what came a ratio that overflows, and it tells nothing.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// quantile is the q-quantile of xs, interpolated between order statistics (Hyndman and Fan's
// type 7, the default of R and NumPy).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// meanAbsPct is the mean of |x - forecast| / x over the outcomes xs, in percent.
func meanAbsPct(xs []float64, forecast float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if x > 0 {
			sum += math.Abs(x-forecast) / x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return 100 * sum / float64(n)
}
