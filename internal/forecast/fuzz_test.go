package forecast

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// FuzzSum feeds the forecaster arbitrary hourly amounts and periods: it either refuses the input
// with ErrInput or gives an ordered, finite forecast that is never below what was spent.
func FuzzSum(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 240, 63}, uint16(30), uint16(5), uint16(700))
	f.Add(make([]byte, 8*200), uint16(24*8), uint16(24*3), uint16(24*30))
	f.Fuzz(func(t *testing.T, raw []byte, hours, intoPeriod, periodLen uint16) {
		n := min(int(hours), 24*7*6)
		v := make([]float64, n)
		for i := range v {
			if len(raw) >= 8*(i+1) {
				v[i] = math.Abs(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
			}
			if v[i] > 1e12 || math.IsNaN(v[i]) {
				v[i] = 1
			}
		}
		now := monday.Add(time.Duration(n) * time.Hour)
		start := now.Add(-time.Duration(intoPeriod) * time.Hour)
		p := Period{Start: start, End: start.Add(time.Duration(periodLen) * time.Hour), Now: now}
		fc, err := Sum(History{Start: monday, Values: v}, p)
		if err != nil {
			return
		}
		for _, x := range []float64{fc.Spent, fc.Expected, fc.Low, fc.High, fc.Linear, fc.ErrorPct} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Fatalf("%+v: a figure is not a finite amount", fc)
			}
		}
		tol := 1e-9 * math.Max(1, fc.High)
		if fc.Low > fc.High+tol || fc.Low < fc.Spent-tol || fc.Expected < fc.Spent-tol {
			t.Fatalf("%+v: want spent ≤ low ≤ high and spent ≤ expected", fc)
		}
	})
}
