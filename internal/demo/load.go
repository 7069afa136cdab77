package demo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxRates bounds an arrival-rate file.
const maxRates = 1 << 16

// ParseRates reads SpotServe's query arrival rates (query/arrival-rates.csv): comma-separated
// non-negative numbers on one or more lines, in time order.
func ParseRates(r io.Reader, name string) ([]float64, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var out []float64
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadTrace, name, err)
		}
		line, _ := cr.FieldPos(0)
		for _, f := range rec {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("%w: %s:%d: rate %q is not a non-negative number", ErrBadTrace, name, line, f)
			}
			if len(out) == maxRates {
				return nil, fmt.Errorf("%w: %s: more than %d rates", ErrBadTrace, name, maxRates)
			}
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no rates", ErrBadTrace, name)
	}
	return out, nil
}

// Curve is a load shape over a span of time: the rates spread evenly over it, linearly
// interpolated, scaled so that the highest rate is 1.
type Curve struct {
	shape []float64
	span  time.Duration
}

// NewCurve spreads rates over span.
func NewCurve(rates []float64, span time.Duration) Curve {
	peak := 0.0
	for _, r := range rates {
		peak = math.Max(peak, r)
	}
	shape := make([]float64, len(rates))
	for i, r := range rates {
		if peak > 0 {
			shape[i] = r / peak
		}
	}
	return Curve{shape: shape, span: span}
}

// At is the load at offset d into the span, in [0,1].
func (c Curve) At(d time.Duration) float64 {
	n := len(c.shape)
	if n == 0 {
		return 0
	}
	if n == 1 || c.span <= 0 {
		return c.shape[0]
	}
	x := float64(d) / float64(c.span) * float64(n-1)
	x = math.Max(0, math.Min(x, float64(n-1)))
	i := int(x)
	if i == n-1 {
		return c.shape[i]
	}
	f := x - float64(i)
	return c.shape[i]*(1-f) + c.shape[i+1]*f
}
