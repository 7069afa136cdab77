package anomaly

import (
	"math"
	"slices"
)

// madScale makes a median absolute deviation estimate a normal distribution's standard deviation.
const madScale = 1.4826

// median of xs (NaN when empty). xs is not modified.
func median(xs []float64) float64 {
	return quantile(xs, 0.5)
}

// quantile is the q-quantile of xs by linear interpolation between order statistics (NaN when
// empty). xs is not modified.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(lo)
	return s[lo]*(1-f) + s[lo+1]*f
}

// mad is the median absolute deviation of xs from m.
func mad(xs []float64, m float64) float64 {
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = math.Abs(x - m)
	}
	return median(d)
}

// meanStd is the mean and the population standard deviation of xs.
func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	var s, ss float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)))
}

// window keeps the last n values pushed, oldest first.
type window struct {
	n      int
	values []float64
}

func (w *window) push(v float64) {
	w.values = append(w.values, v)
	if len(w.values) > 2*w.n { // trim now and then, not at every push
		w.values = slices.Clone(w.values[len(w.values)-w.n:])
	}
}

// last is the last n values (fewer at the start).
func (w *window) last() []float64 {
	if len(w.values) > w.n {
		return w.values[len(w.values)-w.n:]
	}
	return w.values
}
