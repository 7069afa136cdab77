package placement_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

const (
	forecastDay     = 1440 // one-minute steps
	forecastHorizon = 5    // a 5-minute cold start
	morningRise     = 8 * 60
	eveningFall     = 20 * 60
)

// workday is days of per-minute demand: 100 tokens/s at night, a sharp morning rise at 08:00 to
// a daytime hump around 1,000, and a fall at 20:00, with ±5 % noise from a fixed seed.
func workday(days int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0))
	out := make([]float64, days*forecastDay)
	for i := range out {
		m, v := i%forecastDay, 100.0
		if m >= morningRise && m < eveningFall {
			v = 1000 + 200*math.Sin(math.Pi*float64(m-morningRise)/float64(eveningFall-morningRise))
		}
		out[i] = v * (1 + 0.1*(r.Float64()-0.5))
	}
	return out
}

// TestForecastPrewarmsBeforeTheRise: one cold start before the morning rise of the fourth day, the
// forecaster already expects the demand the rise brings, while the night before it does not keep
// that capacity warm, and after the evening fall it lets go at once. Level and trend alone (no
// season) cannot see the rise coming.
func TestForecastPrewarmsBeforeTheRise(t *testing.T) {
	demand := workday(4, 1)
	r, fl := 3*forecastDay+morningRise, 3*forecastDay+eveningFall
	for _, tt := range []struct {
		name   string
		season int
		want   bool
	}{{"daily season", forecastDay, true}, {"no season", 0, false}} {
		t.Run(tt.name, func(t *testing.T) {
			f := placement.NewForecaster(tt.season, forecastHorizon)
			f.Replay(demand[:r-forecastHorizon+1])
			got := f.Expect()
			if (got >= demand[r]) != tt.want {
				t.Errorf("Expect() at the rise − %d steps = %.0f; demand at the rise %.0f; want covered %v", forecastHorizon, got, demand[r], tt.want)
			}
		})
	}
	f := placement.NewForecaster(forecastDay, forecastHorizon)
	f.Replay(demand[:r-60])
	if got := f.Expect(); got > demand[r]/2 {
		t.Errorf("an hour before the rise Expect() = %.0f, want the night's demand, not the day's %.0f", got, demand[r])
	}
	f.Replay(demand[r-60 : fl-forecastHorizon+1])
	if got := f.Expect(); got < demand[fl-1] {
		t.Errorf("before the fall Expect() = %.0f, want at least the day's %.0f", got, demand[fl-1])
	}
	f.Replay(demand[fl-forecastHorizon+1 : fl+1])
	if got := f.Expect(); got > 1.5*demand[fl] {
		t.Errorf("after the fall Expect() = %.0f, want near the night's %.0f", got, demand[fl])
	}
	if mape, n := f.MAPE(); n != placement.ForecastErrorWindow || mape > 15 {
		t.Errorf("MAPE() = %.1f %% over %d, want under 15 %% over %d", mape, n, placement.ForecastErrorWindow)
	}
}

func TestForecastConstant(t *testing.T) {
	f := placement.NewForecaster(forecastDay, forecastHorizon)
	for range 2*forecastDay + 100 {
		f.Observe(42)
	}
	if mape, n := f.MAPE(); mape != 0 || n == 0 {
		t.Errorf("MAPE() = %v over %d, want 0 over some", mape, n)
	}
	if got := f.Expect(); math.Abs(got-42) > 1e-9 {
		t.Errorf("Expect() = %v, want 42", got)
	}
}

// TestForecastFollowsSteps: a step up is forecast within 10 % in five steps, and after a step down
// the expected demand falls back within ten (nothing holds it up: the misses were over-forecasts).
func TestForecastFollowsSteps(t *testing.T) {
	f := placement.NewForecaster(0, forecastHorizon)
	for range 200 {
		f.Observe(100)
	}
	for range 5 {
		f.Observe(500)
	}
	if got := f.Forecast(1); math.Abs(got-500) > 50 {
		t.Errorf("5 steps after a step to 500, Forecast(1) = %.1f", got)
	}
	for range 195 {
		f.Observe(500)
	}
	for range 10 {
		f.Observe(100)
	}
	if got := f.Expect(); got > 120 {
		t.Errorf("10 steps after a step down to 100, Expect() = %.1f", got)
	}
}

// TestForecastErrorByHand: horizon 1, no season: forecasts 100 then 100 for actuals 100 and 200
// miss by 0 % and 50 %; the miss of 100 on a forecast of 100 asks for 100 % headroom.
func TestForecastErrorByHand(t *testing.T) {
	f := placement.NewForecaster(0, 1)
	f.Replay([]float64{100, 100, 200})
	if mape, n := f.MAPE(); mape != 25 || n != 2 {
		t.Errorf("MAPE() = %v over %d, want 25 over 2", mape, n)
	}
	if h := f.Headroom(); h != 1 {
		t.Errorf("Headroom() = %v, want 1", h)
	}
}

// TestForecastOddValues: a negative value counts as 0; a missing one (NaN, ±Inf) is filled with
// the forecast and not measured; zeros are not measured in percent.
func TestForecastOddValues(t *testing.T) {
	neg, zero := placement.NewForecaster(4, 2), placement.NewForecaster(4, 2)
	neg.Replay([]float64{3, 5, -2, 7, 1, -9})
	zero.Replay([]float64{3, 5, 0, 7, 1, 0})
	if !reflect.DeepEqual(neg, zero) {
		t.Error("a negative value did not count as 0")
	}
	f := placement.NewForecaster(0, 2)
	f.Replay([]float64{10, 10, math.NaN(), 10, math.Inf(1), 10, math.Inf(-1), 10})
	if mape, n := f.MAPE(); mape != 0 || n != 3 {
		t.Errorf("MAPE() = %v over %d, want 0 over the 3 real values after the first forecast", mape, n)
	}
	if got := f.Expect(); got != 10 {
		t.Errorf("Expect() = %v, want 10", got)
	}
	z := placement.NewForecaster(forecastDay, forecastHorizon)
	z.Replay(make([]float64, forecastDay+10))
	if mape, n := z.MAPE(); mape != 0 || n != 0 || z.Expect() != 0 {
		t.Errorf("all zeros: MAPE() = %v over %d, Expect() = %v; want 0, 0, 0", mape, n, z.Expect())
	}
}

func TestForecastIsDeterministic(t *testing.T) {
	demand := workday(2, 7)
	a, b := placement.NewForecaster(forecastDay, forecastHorizon), placement.NewForecaster(forecastDay, forecastHorizon)
	for i, v := range demand {
		a.Observe(v)
		b.Observe(v)
		if a.Expect() != b.Expect() {
			t.Fatalf("step %d: Expect() %v and %v on the same input", i, a.Expect(), b.Expect())
		}
	}
	c := placement.NewForecaster(forecastDay, forecastHorizon)
	c.Replay(demand)
	if !reflect.DeepEqual(a, c) {
		t.Error("Replay did not rebuild the state Observe built")
	}
}

func TestSteps(t *testing.T) {
	tests := []struct {
		d, step time.Duration
		want    int
	}{
		{5 * time.Minute, time.Minute, 5}, {8 * time.Minute, 10 * time.Minute, 1}, {24 * time.Hour, time.Minute, 1440},
		{90 * time.Second, time.Minute, 2}, {0, time.Minute, 1}, {time.Hour, 0, 1},
	}
	for _, tt := range tests {
		if got := placement.Steps(tt.d, tt.step); got != tt.want {
			t.Errorf("Steps(%v, %v) = %d, want %d", tt.d, tt.step, got, tt.want)
		}
	}
}

// FuzzForecaster: whatever values arrive, the expected demand is finite, not negative and not
// below the last real value.
func FuzzForecaster(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN())))
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := placement.NewForecaster(3, 2)
		for len(data) >= 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(data))
			data = data[8:]
			if math.Abs(v) > 1e15 && !math.IsInf(v, 0) {
				continue // beyond any fleet's demand, where sums may overflow
			}
			fc.Observe(v)
			e := fc.Expect()
			if math.IsNaN(e) || math.IsInf(e, 0) || e < 0 {
				t.Fatalf("after %v, Expect() = %v", v, e)
			}
			if v >= 0 && !math.IsInf(v, 0) && e < v {
				t.Fatalf("Expect() = %v below the last value %v", e, v)
			}
		}
	})
}

func BenchmarkForecaster(b *testing.B) {
	demand := workday(2, 3)
	f := placement.NewForecaster(forecastDay, forecastHorizon)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		f.Observe(demand[i%len(demand)])
		_ = f.Expect()
	}
}
