// Package forecast predicts where a period (a day, a week, a month) will end for an hourly
// quantity (spend, GPU-hours, tokens, or a ratio of two such as cost per million tokens), with an
// 80 % interval taken from the forecaster's own errors on the history it is given.
//
// It is pure: the history and the time of the forecast are passed in, nothing is read or logged,
// and the same input always gives the same forecast. The model is deliberately small and
// deterministic (no ML framework): an hour-of-day × day-of-week profile times a recent level, see
// model.go. docs/forecasts.md gives its measured accuracy and the fallbacks it states.
package forecast

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// History is an hourly quantity: Values[i] is the amount in the hour that starts at
// Start + i hours. The last value is the hour that holds the forecast's Now, counted up to Now.
type History struct {
	Start  time.Time
	Values []float64
}

// Period is what is forecast: the total from Start to End, as known at Now.
type Period struct {
	Start, End, Now time.Time
}

// Model names say which forecaster gave a Forecast.
const (
	// Weekly is the hour-of-day × day-of-week profile (two weeks of history or more).
	Weekly = "weekly"
	// Daily is the hour-of-day profile (MinHistoryHours up to two weeks of history).
	Daily = "daily"
	// BurnRate is the fallback under MinHistoryHours: the latest hour's rate until the end.
	BurnRate = "burn rate"
)

// Interval methods say where a Forecast's Low and High come from.
const (
	// Backtested: today's forecast with the forecaster's errors at this horizon on the history
	// applied, read between the percentiles lowQ and highQ.
	Backtested = "backtested"
	// Scaled: the history is too short to backtest at this horizon, so the errors at the longest
	// horizon it allows are widened by √(horizon / that horizon), as a random walk's would be.
	Scaled = "scaled"
	// RangeSeen: under MinHistoryHours there is nothing to backtest; the interval is the lowest
	// and highest hourly rate seen, carried to the end. It is not an 80 % interval.
	RangeSeen = "range seen"
)

// Forecast is where a period is expected to end, and how far that has been off before.
type Forecast struct {
	Spent    float64 // the amount from the period's start to Now (for a ratio: the ratio so far)
	Expected float64 // the period's expected total (ratio)
	Low      float64 // 80 % interval of the total (see Interval)
	High     float64
	// Linear is the burn-rate forecast: Spent plus the latest whole hour's rate until End.
	Linear float64
	// ErrorPct is the backtested mean absolute error of Expected, in percent: how far off the
	// period's total would be if the remaining part were as wrong as the forecaster was at this
	// horizon on the history. LinearErrorPct is the same for Linear. Both are 0 when Samples is 0.
	ErrorPct       float64
	LinearErrorPct float64
	// Samples is the number of backtest origins behind ErrorPct and the interval; 0: none.
	Samples  int
	Model    string // Weekly, Daily or BurnRate
	Interval string // Backtested, Scaled or RangeSeen
	// LevelHours is the recent stretch the level was read from, the one of 24, 168 and 336 hours
	// with the least backtested error; 0 for BurnRate.
	LevelHours int
}

// Tunables of the forecaster. lowQ and highQ were chosen on March-April of the benchmark
// (internal/forecast/bench), which reports May-July apart; the rest were set before it ran
// (the choice among levelWindows replaced a fixed day after its first run: docs/forecasts.md).
const (
	// MinHistoryHours is the whole hours of history below which the forecast is the burn rate:
	// two days to fit an hour-of-day profile, and two more to backtest it at a one-day horizon.
	MinHistoryHours = 96
	// minTrainHours is the least history a backtest origin is fitted on.
	minTrainHours = 48
	// minSamples is the least number of backtest origins an interval is read from.
	minSamples = 24
	// lowQ and highQ are the percentiles of the backtested outcomes the 80 % interval is read
	// between. Backtest origins an hour apart overlap, and the level window is chosen on them,
	// so their spread understates the error ahead: the 10th to 90th percentiles covered 69 % of
	// the benchmark's outcomes. The 3rd to 97th covered 80 % of March-April's (the tuning
	// months) on its first 28 scopes; on its 36 now, 82 % of March-April's and 85 % of
	// May-July's (docs/forecasts.md).
	lowQ, highQ = 0.03, 0.97
)

// ErrInput is wrapped by every error about the input.
var ErrInput = errors.New("forecast input")

// Sum forecasts the period's total of h. Hours before the first with any amount are left out
// (trim): a scope that has spent nothing yet had not begun, and its zeros say nothing of its level.
func Sum(h History, p Period) (Forecast, error) {
	s, err := newSeries(trim(h, h), p)
	if err != nil {
		return Forecast{}, err
	}
	return combine(p, []*series{s}, func(v []float64) float64 { return v[0] })
}

// Ratio forecasts scale × num/den over the period, e.g. spend per million tokens with scale 1e6.
// num and den must cover the same hours. The interval applies each backtest origin's errors of
// num and den together, so a cost that moves with the tokens it serves does not widen it.
func Ratio(num, den History, p Period, scale float64) (Forecast, error) {
	if !num.Start.Equal(den.Start) || len(num.Values) != len(den.Values) {
		return Forecast{}, fmt.Errorf("%w: numerator from %s (%d hours) and denominator from %s (%d hours) must cover the same hours",
			ErrInput, num.Start.Format(time.RFC3339), len(num.Values), den.Start.Format(time.RFC3339), len(den.Values))
	}
	n, err := newSeries(trim(num, num, den), p)
	if err != nil {
		return Forecast{}, fmt.Errorf("numerator: %w", err)
	}
	d, err := newSeries(trim(den, num, den), p)
	if err != nil {
		return Forecast{}, fmt.Errorf("denominator: %w", err)
	}
	return combine(p, []*series{n, d}, func(v []float64) float64 {
		if v[1] <= 0 {
			return math.NaN()
		}
		return scale * v[0] / v[1]
	})
}

// trim drops the hours of h before the first in which any of all has an amount (none when all
// are zero throughout).
func trim(h History, all ...History) History {
	first := len(h.Values)
	for _, a := range all {
		for i, v := range a.Values[:min(first, len(a.Values))] {
			if v != 0 {
				first = i
				break
			}
		}
	}
	if first == len(h.Values) {
		return h
	}
	return History{Start: h.Start.Add(time.Duration(first) * time.Hour), Values: h.Values[first:]}
}

// Hours is how many values a History from start needs to hold the hour of now.
func Hours(start, now time.Time) int {
	return int(math.Ceil(now.Sub(start).Hours()))
}

func checkInput(h History, p Period) error {
	switch {
	case !h.Start.Equal(h.Start.Truncate(time.Hour)):
		return fmt.Errorf("%w: history starts at %s, not on the hour", ErrInput, h.Start.Format(time.RFC3339))
	case !p.Start.Equal(p.Start.Truncate(time.Hour)):
		return fmt.Errorf("%w: period starts at %s, not on the hour", ErrInput, p.Start.Format(time.RFC3339))
	case !p.End.After(p.Start):
		return fmt.Errorf("%w: period %s to %s is empty", ErrInput, p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339))
	case p.Now.Before(p.Start) || p.Now.After(p.End):
		return fmt.Errorf("%w: now %s is outside the period %s to %s", ErrInput, p.Now.Format(time.RFC3339),
			p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339))
	case p.Now.Before(h.Start):
		return fmt.Errorf("%w: now %s is before the history starts (%s)", ErrInput, p.Now.Format(time.RFC3339), h.Start.Format(time.RFC3339))
	}
	if want := Hours(h.Start, p.Now); len(h.Values) != want {
		return fmt.Errorf("%w: history from %s to now %s needs %d hourly values, got %d", ErrInput,
			h.Start.Format(time.RFC3339), p.Now.Format(time.RFC3339), want, len(h.Values))
	}
	for i, v := range h.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%w: hour %d (%s): %v is not a finite amount of zero or more", ErrInput, i,
				h.Start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), v)
		}
	}
	return nil
}
