package forecast

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// monday is the start of the test histories: a Monday, so the weekly profile lines up with it.
var monday = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// periodic is an hourly spend with a working-day shape: busy 08:00-20:00, half on weekends,
// times (1 + noise·ε) with ε uniform in [-1, 1] from a fixed seed.
func periodic(hours int, noise float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float64, hours)
	for i := range v {
		t := monday.Add(time.Duration(i) * time.Hour)
		x := 10.0
		if t.Hour() >= 8 && t.Hour() < 20 {
			x = 30
		}
		if t.Weekday() == time.Saturday || t.Weekday() == time.Sunday {
			x /= 2
		}
		v[i] = x * (1 + noise*(2*r.Float64()-1))
	}
	return v
}

// upTo is the history of the first hours of v, a forecast at monday + hours.
func upTo(v []float64, hours int) History { return History{Start: monday, Values: v[:hours]} }

func total(v []float64, from, to time.Time) float64 {
	t := 0.0
	for i := int(from.Sub(monday).Hours()); i < int(to.Sub(monday).Hours()); i++ {
		t += v[i]
	}
	return t
}

func TestPeriodicSeriesExact(t *testing.T) {
	v := periodic(10*week, 0, 1)
	start, end := monday.AddDate(0, 0, 35), monday.AddDate(0, 0, 35+30)
	now := start.AddDate(0, 0, 9).Add(5 * time.Hour)
	f, err := Sum(upTo(v, Hours(monday, now)), Period{Start: start, End: end, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := total(v, start, end)
	if f.Model != Weekly || f.Interval != Backtested || math.Abs(f.Expected-want) > 1e-6*want {
		t.Errorf("forecast %+v; want the weekly model, backtested, expecting %.2f", f, want)
	}
	if f.Low > want+1e-6 || f.High < want-1e-6 || f.ErrorPct > 1e-6 {
		t.Errorf("interval %.4f..%.4f error %.6f%%; want it to hold %.4f with no error", f.Low, f.High, f.ErrorPct, want)
	}
	if lin := f.Linear; math.Abs(lin-want) < 0.01*want {
		t.Errorf("linear forecast %.2f is as good as the seasonal one (%.2f): the test series is not seasonal", lin, want)
	}
}

// TestPeriodicSeriesWithinInterval forecasts each day of a month of noisy periodic series (ten
// seeds): the outcome falls in the 80 % interval about as often as it says, and the forecast is
// close.
func TestPeriodicSeriesWithinInterval(t *testing.T) {
	in, n, absErr := 0, 0, 0.0
	for seed := range uint64(10) {
		v := periodic(12*week, 0.3, seed)
		start := monday.AddDate(0, 0, 7*7)
		end := start.AddDate(0, 0, 30)
		want := total(v, start, end)
		for d := 1; d < 30; d += 2 {
			now := start.AddDate(0, 0, d).Add(13 * time.Hour)
			f, err := Sum(upTo(v, Hours(monday, now)), Period{Start: start, End: end, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			n++
			if f.Low <= want && want <= f.High {
				in++
			}
			absErr += math.Abs(f.Expected-want) / want
			if f.Low >= f.High || f.Samples < minSamples || f.Interval != Backtested {
				t.Errorf("seed %d day %d: %+v: want a backtested interval", seed, d, f)
			}
		}
	}
	if cover := float64(in) / float64(n); cover < 0.65 || cover > 0.95 {
		t.Errorf("the outcome fell in the 80%% interval %d times in %d", in, n)
	}
	if mape := 100 * absErr / float64(n); mape > 4 {
		t.Errorf("mean absolute error %.1f%%, want under 4%% on a steady periodic series", mape)
	}
}

// drifting is periodic with a level that wanders from day to day (a random walk of its log, 3 %
// a day), as spend does when what runs changes: the further ahead, the less is known.
func drifting(hours int, seed uint64) []float64 {
	v := periodic(hours, 0.3, seed)
	r := rand.New(rand.NewPCG(seed, 2))
	level := 1.0
	for i := range v {
		if i%day == 0 {
			level *= math.Exp(0.03 * r.NormFloat64())
		}
		v[i] *= level
	}
	return v
}

// TestIntervalWidensWithHorizon: on drifting series, the interval's mean width over five seeds
// grows with the time left to the period's end.
func TestIntervalWidensWithHorizon(t *testing.T) {
	now := monday.AddDate(0, 0, 56)
	prev := 0.0
	for _, days := range []int{1, 3, 7, 14, 21} {
		width := 0.0
		for seed := range uint64(5) {
			h := upTo(drifting(10*week, seed+1), Hours(monday, now))
			f, err := Sum(h, Period{Start: now, End: now.AddDate(0, 0, days), Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if f.Interval != Backtested {
				t.Fatalf("%d days ahead: interval %q, want backtested", days, f.Interval)
			}
			width += (f.High - f.Low) / 5
		}
		if width <= prev {
			t.Errorf("%d days ahead: interval %.1f wide on average, not wider than %.1f", days, width, prev)
		}
		prev = width
	}
}

func TestShortHistoryFallsBack(t *testing.T) {
	v := periodic(8*week, 0.2, 5)
	tests := []struct {
		name         string
		hours        int
		wantModel    string
		wantInterval string
	}{
		{"under a day", 10, BurnRate, RangeSeen},
		{"three days", 72, BurnRate, RangeSeen},
		{"four days: daily, scaled to the month", 96, Daily, Scaled},
		{"ten days: daily, scaled", 240, Daily, Scaled},
		{"five weeks: weekly, backtested", 5 * week, Weekly, Backtested},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := monday.Add(time.Duration(tt.hours) * time.Hour)
			start := now.Add(-time.Duration(min(tt.hours, 24*5)) * time.Hour).Truncate(time.Hour)
			f, err := Sum(upTo(v, tt.hours), Period{Start: start, End: start.AddDate(0, 0, 30), Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if f.Model != tt.wantModel || f.Interval != tt.wantInterval {
				t.Fatalf("model %q interval %q; want %q %q", f.Model, f.Interval, tt.wantModel, tt.wantInterval)
			}
			if f.Model == BurnRate && (f.Expected != f.Linear || f.Samples != 0 || f.Low > f.Linear || f.High < f.Linear) {
				t.Errorf("burn-rate fallback %+v: want the linear forecast inside the range seen, no samples", f)
			}
			if f.Model != BurnRate && f.Samples < minSamples {
				t.Errorf("%d samples, want at least %d", f.Samples, minSamples)
			}
		})
	}
}

func TestRatioFollowsItsParts(t *testing.T) {
	cost := periodic(6*week, 0.2, 9)
	tokens := make([]float64, len(cost))
	for i, c := range cost {
		tokens[i] = c * 2e5 // $5 per million tokens, whatever the hour
	}
	now := monday.AddDate(0, 0, 38)
	start := monday.AddDate(0, 0, 31)
	p := Period{Start: start, End: start.AddDate(0, 0, 30), Now: now}
	f, err := Ratio(upTo(cost, Hours(monday, now)), upTo(tokens, Hours(monday, now)), p, 1e6)
	if err != nil {
		t.Fatal(err)
	}
	for name, x := range map[string]float64{"so far": f.Spent, "expected": f.Expected, "low": f.Low, "high": f.High, "linear": f.Linear} {
		if math.Abs(x-5) > 1e-9 {
			t.Errorf("%s = %v, want 5: a cost that moves with its tokens has a steady price per token", name, x)
		}
	}
}

func TestBadInput(t *testing.T) {
	now := monday.Add(50 * time.Hour)
	ok := periodic(50, 0, 1)
	p := Period{Start: monday, End: monday.AddDate(0, 0, 7), Now: now}
	with := func(i int, x float64) []float64 {
		v := append([]float64(nil), ok...)
		v[i] = x
		return v
	}
	tests := []struct {
		name string
		h    History
		p    Period
	}{
		{"NaN hour", History{monday, with(3, math.NaN())}, p},
		{"negative hour", History{monday, with(7, -1)}, p},
		{"infinite hour", History{monday, with(49, math.Inf(1))}, p},
		{"start not on the hour", History{monday.Add(time.Minute), ok}, p},
		{"too few hours", History{monday, ok[:40]}, p},
		{"too many hours", History{monday, append(ok, 1)}, p},
		{"now after the period", History{monday, ok}, Period{Start: monday, End: monday.Add(24 * time.Hour), Now: now}},
		{"empty period", History{monday, ok}, Period{Start: now, End: now, Now: now}},
		{"period not on the hour", History{monday, ok}, Period{Start: monday.Add(time.Second), End: p.End, Now: now}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Sum(tt.h, tt.p); !errors.Is(err, ErrInput) {
				t.Errorf("err = %v, want ErrInput", err)
			}
		})
	}
	if _, err := Ratio(History{monday, ok}, History{monday, ok[:49]}, p, 1); !errors.Is(err, ErrInput) {
		t.Errorf("ratio of unequal histories: err = %v, want ErrInput", err)
	}
}

func TestEmptyAndLateHistory(t *testing.T) {
	now := monday.Add(50 * time.Hour)
	p := Period{Start: monday, End: monday.AddDate(0, 0, 7), Now: now}
	f, err := Sum(History{Start: now, Values: nil}, p)
	if err != nil || f.Spent != 0 || f.Expected != 0 || f.Low != 0 || f.High != 0 {
		t.Errorf("nothing recorded: %+v, %v; want zeros", f, err)
	}
	// A scope that began at hour 40: the zeros before are not a level of zero.
	v := make([]float64, 50)
	for i := 40; i < 50; i++ {
		v[i] = 3
	}
	f, err = Sum(History{Start: monday, Values: v}, p)
	if err != nil || f.Spent != 30 || f.Model != BurnRate || math.Abs(f.Expected-(30+3*(7*24-50))) > 1e-9 {
		t.Errorf("late start: %+v, %v; want the burn rate of its ten hours", f, err)
	}
}
