package report

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/forecast"
)

// MaxForecastHistory bounds the hourly history `report forecast` reads (its default, twelve
// weeks, gives a month-end forecast on the first of the month enough backtest origins): a
// longer one only adds backtest origins, each fitted on the weeks before it.
const MaxForecastHistory = 366 * 24 * time.Hour

// The quantities forecast for each scope.
const (
	metricUSD      = "usd"
	metricGPUHours = "gpu_hours"
	metricPerToken = "usd_per_m_tokens"
)

// hourlyScope is one scope's hourly spend, GPU-hours and tokens over the window.
type hourlyScope struct {
	usd, gpuHours, tokens []float64
}

// Forecast is `report forecast`: for each budget policy's scope, where its current period (day,
// week or month) will end for spend, GPU-hours and cost per million tokens (input and output),
// from the hourly history in the window (o.Window, ending at o.Now): spent so far, the forecast,
// its 80 % interval and backtested error (internal/forecast), and the burn-rate forecast with its
// own error beside it.
func Forecast(ctx context.Context, q Querier, policies []budget.Policy, o Options) (*Result, error) {
	res := &Result{Title: "Period-end forecasts at " + o.Now.UTC().Format(time.RFC3339),
		Columns: []string{"policy", "scope", "period_end", "metric", "so_far", "forecast", "low_80", "high_80",
			"error_pct", "burn_rate_forecast", "burn_rate_error_pct", "limit_pct", "model", "interval", "samples"},
		Notes: []string{"forecast: hour-of-day × day-of-week profile times a recent level; low_80..high_80 and error_pct " +
			"from its own backtest on the history at this horizon; burn_rate_forecast: so far + the latest hour's rate " +
			"until the period ends (docs/forecasts.md)"}}
	if len(policies) == 0 {
		res.Notes = append(res.Notes, "no budget policies: set one with `arbiter budget set`, or give a policy file with -f")
		return res, nil
	}
	start := hourFloor(o.Window.Since)
	for _, p := range policies {
		if s, _ := budget.Bounds(p.Period, o.Now); s.Before(start) {
			start = s
		}
	}
	lo := o
	lo.Window, lo.Filter, lo.By = Window{Since: start, Until: o.Now}, nil, nil
	us, err := loadUsageOf(ctx, q, lo, time.Hour, colWorkload|colLocation|colProvider)
	if err != nil {
		return nil, err
	}
	toks, err := loadTokens(ctx, q, lo, time.Hour)
	if err != nil {
		return nil, err
	}
	for _, p := range policies {
		h := scopeHours(p.Scope, us, toks, o, start)
		rows, err := forecastRows(p, h, start, o.Now)
		if err != nil {
			return nil, fmt.Errorf("forecasting policy %s: %w", p.Name, err)
		}
		res.Rows = append(res.Rows, rows...)
	}
	return res, nil
}

// scopeHours sums usage and tokens in scope by hour from start to now. Tokens are counted by
// workload and location; a location's provider is the one its usage ran on.
func scopeHours(sc budget.Scope, us []Usage, toks []tokenUse, o Options, start time.Time) hourlyScope {
	n := forecast.Hours(start, o.Now)
	h := hourlyScope{usd: make([]float64, n), gpuHours: make([]float64, n), tokens: make([]float64, n)}
	provider := map[string]string{}
	at := func(t time.Time) int { return int(t.Sub(start) / time.Hour) }
	for _, u := range us {
		provider[u.Location] = u.Provider
		if i := at(u.Hour); i >= 0 && i < n && sc.Matches(u.Workload, o.team(u.Workload), u.Provider, u.Location) {
			h.usd[i] += u.USD
			h.gpuHours[i] += u.GPUHours
		}
	}
	for _, t := range toks {
		i := at(time.Unix(t.Hour, 0))
		if i >= 0 && i < n && sc.Matches(t.Workload, o.team(t.Workload), provider[t.Location], t.Location) {
			h.tokens[i] += float64(t.Prompt + t.Gen)
		}
	}
	return h
}

// forecastRows forecasts p's current period for each quantity. Cost per million tokens is left
// out where the scope served no tokens in the window.
func forecastRows(p budget.Policy, h hourlyScope, start, now time.Time) ([]cli.Row, error) {
	ps, pe := budget.Bounds(p.Period, now)
	period := forecast.Period{Start: ps, End: pe, Now: now}
	hist := func(v []float64) forecast.History { return forecast.History{Start: start, Values: v} }
	var rows []cli.Row
	for _, m := range []string{metricUSD, metricGPUHours, metricPerToken} {
		var f forecast.Forecast
		var err error
		switch m {
		case metricUSD:
			f, err = forecast.Sum(hist(h.usd), period)
		case metricGPUHours:
			f, err = forecast.Sum(hist(h.gpuHours), period)
		default:
			if sum(h.tokens) == 0 {
				continue
			}
			f, err = forecast.Ratio(hist(h.usd), hist(h.tokens), period, 1e6)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		r := cli.Row{"policy": p.Name, "scope": p.Scope.String(), "period_end": pe.Format(time.RFC3339), "metric": m,
			"so_far": num(f.Spent), "forecast": num(f.Expected), "low_80": num(f.Low), "high_80": num(f.High),
			"burn_rate_forecast": num(f.Linear), "model": f.Model, "interval": f.Interval, "samples": f.Samples,
			"error_pct": "", "burn_rate_error_pct": "", "limit_pct": ""}
		if f.Samples > 0 {
			r["error_pct"], r["burn_rate_error_pct"] = round(f.ErrorPct, 1), round(f.LinearErrorPct, 1)
		}
		if m == metricUSD {
			r["limit_pct"] = round(100*ratio(f.Expected, p.Limit), 1)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// num rounds a forecast for printing; a ratio with nothing to divide by prints empty.
func num(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return round(v, 4)
}

func sum(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}
