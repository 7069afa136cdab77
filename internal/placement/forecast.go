package placement

import (
	"math"
	"slices"
	"time"
)

// The forecaster's fixed constants. They are not fitted to any trace: the smoothing constants are
// the middle of the ranges the forecasting literature uses for Holt-Winters (Hyndman &
// Athanasopoulos, "Forecasting: Principles and Practice", 3rd ed., §8.3: α, β*, γ in [0, 1],
// small β* and γ for slowly moving trend and season).
const (
	// ForecastAlpha smooths the level: 0.4 follows a step change to within 8 % in 5 steps
	// (0.6^5) while averaging out one step's noise.
	ForecastAlpha = 0.4
	// ForecastBeta smooths the trend: small, so a few noisy steps do not make a slope.
	ForecastBeta = 0.05
	// ForecastGamma smooths the seasonal index: each slot of the season sees one value per
	// season, so 0.2 keeps about the last five seasons (days) in it.
	ForecastGamma = 0.2
	// ForecastErrorWindow is how many recent horizon forecasts the error (MAPE) and the headroom
	// are measured over.
	ForecastErrorWindow = 120
	// ForecastHeadroomQuantile is the share of recent under-forecasts the headroom covers.
	ForecastHeadroomQuantile = 0.9
	// ForecastMaxHeadroom bounds the headroom at doubling the forecast: the error window still
	// holds the misses of a step change for a while after the level has caught up with it, and
	// they should not keep several times the capacity warm.
	ForecastMaxHeadroom = 1.0
)

// Forecaster predicts a workload's demand one cold start ahead, so warm capacity can be launched
// before a rise rather than one cold start after it: additive Holt-Winters smoothing (level,
// trend and a seasonal index per step of the season), with level and trend alone until one full
// season has been seen. It also measures its own error at that horizon: each forecast made
// horizon steps ago is compared with the value that arrived.
//
// It is pure and deterministic: the same values observed in the same order give the same
// forecasts. Its state is the values it was fed, so a restart rebuilds it by observing the
// recorded history again in order (Replay). The state held is one float per step of the season
// plus the last horizon forecasts and error window, a few kilobytes for a daily season of
// one-minute steps.
type Forecaster struct {
	season, horizon int
	n               int // values observed
	level, trend    float64
	// seasonal holds, during the first season, the values themselves; after it, the seasonal
	// index of each step of the season.
	seasonal []float64
	last     float64
	// ahead[t % horizon] is the forecast made after value t for value t+horizon.
	ahead []float64
	// errs holds recent (actual, forecast) pairs at the horizon, errs[k % window] the k-th.
	errs  [][2]float64
	nErrs int
}

// NewForecaster returns a forecaster for values sampled once a step, with a season of season
// steps (a day: 1,440 one-minute steps; 0 or 1: no season) and forecasts horizon steps ahead
// (at least 1).
func NewForecaster(season, horizon int) *Forecaster {
	season, horizon = max(season, 1), max(horizon, 1)
	return &Forecaster{season: season, horizon: horizon, seasonal: make([]float64, season),
		ahead: make([]float64, horizon), errs: make([][2]float64, ForecastErrorWindow)}
}

// Steps is how many whole steps of step cover d (rounded up, at least 1): a cold start of 5m at
// one-minute steps is 5, a day is 1,440.
func Steps(d, step time.Duration) int {
	if step <= 0 || d <= 0 {
		return 1
	}
	return int((d + step - 1) / step)
}

// Replay observes history in order: how a restarted arbiter rebuilds a workload's forecaster
// from its recorded demand.
func (f *Forecaster) Replay(history []float64) {
	for _, v := range history {
		f.Observe(v)
	}
}

// Observe takes the next step's value. A negative value (a counter reset) counts as 0; a missing
// value (NaN or ±Inf) is replaced by the forecast for it, so the season keeps its place, and is
// not counted in the error.
func (f *Forecaster) Observe(v float64) {
	missing := math.IsNaN(v) || math.IsInf(v, 0)
	switch {
	case missing:
		v = f.Forecast(1)
	case v < 0:
		v = 0
	}
	if !missing && f.n >= f.horizon {
		f.record(v, f.ahead[f.n%f.horizon])
	}
	f.update(v)
	f.last = v
	f.n++
	f.ahead[(f.n-1)%f.horizon] = f.Forecast(f.horizon)
}

// update folds value n (v) into level, trend and season.
func (f *Forecaster) update(v float64) {
	slot := f.n % f.season
	switch {
	case f.n == 0:
		f.level = v
	case f.season > 1 && f.n >= f.season:
		prev := f.level
		f.level = ForecastAlpha*(v-f.seasonal[slot]) + (1-ForecastAlpha)*(f.level+f.trend)
		f.trend = ForecastBeta*(f.level-prev) + (1-ForecastBeta)*f.trend
		f.seasonal[slot] = ForecastGamma*(v-f.level) + (1-ForecastGamma)*f.seasonal[slot]
		return
	default:
		prev := f.level
		f.level = ForecastAlpha*v + (1-ForecastAlpha)*(f.level+f.trend)
		f.trend = ForecastBeta*(f.level-prev) + (1-ForecastBeta)*f.trend
	}
	if f.season > 1 {
		f.seasonal[slot] = v
		if slot == f.season-1 {
			f.startSeason()
		}
	}
}

// startSeason turns the first season's values into seasonal indices around their mean, which
// becomes the level: the next forecast for each step is then the first season's value there.
func (f *Forecaster) startSeason() {
	mean := 0.0
	for _, v := range f.seasonal {
		mean += v
	}
	mean /= float64(f.season)
	for i := range f.seasonal {
		f.seasonal[i] -= mean
	}
	f.level, f.trend = mean, 0
}

// seasonalAt is the seasonal index of the step k steps after the last value; 0 before a season
// has been seen.
func (f *Forecaster) seasonalAt(k int) float64 {
	if f.season <= 1 || f.n < f.season {
		return 0
	}
	return f.seasonal[(f.n-1+k)%f.season]
}

// Forecast is the value expected k steps after the last one observed (k ≥ 1), never below 0.
func (f *Forecaster) Forecast(k int) float64 {
	if f.n == 0 {
		return 0
	}
	return max(0, f.level+float64(k)*f.trend+f.seasonalAt(k))
}

// Peak is the highest forecast over the next horizon steps.
func (f *Forecaster) Peak() float64 {
	peak := 0.0
	for k := 1; k <= f.horizon; k++ {
		peak = max(peak, f.Forecast(k))
	}
	return peak
}

// Expect is the demand to size warm capacity for now: the peak forecast over the horizon plus
// the headroom its recent errors call for, and never less than the last value. It stays up while
// a rise is forecast within the horizon and falls only as the forecast falls, so scale-down waits
// for the forecast rather than the current rate.
func (f *Forecaster) Expect() float64 {
	return max(f.last, f.Peak()*(1+f.Headroom()))
}

// record keeps one (actual, forecast) pair at the horizon.
func (f *Forecaster) record(actual, forecast float64) {
	f.errs[f.nErrs%len(f.errs)] = [2]float64{actual, forecast}
	f.nErrs++
}

// window is the recorded (actual, forecast) pairs still in the error window.
func (f *Forecaster) window() [][2]float64 { return f.errs[:min(f.nErrs, len(f.errs))] }

// MAPE is the mean absolute percentage error of the forecasts made horizon steps ahead over the
// error window, in percent, and how many forecasts it measured: steps whose actual value was 0
// (or missing) have no percentage error and are skipped. 0, 0 before any.
func (f *Forecaster) MAPE() (pct float64, n int) {
	sum := 0.0
	for _, e := range f.window() {
		if e[0] > 0 {
			sum += math.Abs(e[0]-e[1]) / e[0]
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return 100 * sum / float64(n), n
}

// Headroom is the share above the forecast that covers ForecastHeadroomQuantile of its recent
// under-forecasts at the horizon ((actual − forecast) / forecast), at most ForecastMaxHeadroom;
// over-forecasts need none. An under-forecast of a forecast of 0 counts as the most headroom.
func (f *Forecaster) Headroom() float64 { return f.headroomAt(ForecastHeadroomQuantile) }

// headroomAt is Headroom covering the share q of recent under-forecasts.
func (f *Forecaster) headroomAt(q float64) float64 {
	w := f.window()
	if len(w) == 0 {
		return 0
	}
	under := make([]float64, len(w))
	for i, e := range w {
		switch {
		case e[0] <= e[1]:
		case e[1] <= 0:
			under[i] = ForecastMaxHeadroom
		default:
			under[i] = min((e[0]-e[1])/e[1], ForecastMaxHeadroom)
		}
	}
	slices.Sort(under)
	i := int(math.Ceil(q*float64(len(under)))) - 1
	return under[min(max(i, 0), len(under)-1)]
}

// Horizon is how many steps ahead the forecaster sizes for.
func (f *Forecaster) Horizon() int { return f.horizon }
