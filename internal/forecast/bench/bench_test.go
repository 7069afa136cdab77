package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/costseries"
	"github.com/bursar-dev/bursar/internal/forecast"
)

// historyWeeks is the history each forecast is given, as `report forecast --history` defaults.
const historyWeeks = 12

// data is ../shared/data seen from this package.
const data = "../../../../shared/data"

// replays are the replays the scopes come from, named here (costseries.DefaultOptions of
// 2026-12-07) so that the figures in docs/forecasts.md stay those of this list: AWS1 and AWS2
// under four replica policies, the two ServeGen traces under three serving policies.
var replays = costseries.Options{
	Data:            data,
	ReplicaTraces:   []string{"AWS1", "AWS2"},
	ReplicaPolicies: []string{"spothedge", "bursar-direct", "round-robin:1", "even-spread:1"},
	ServingPolicies: []string{"od-autoscale", "skyserve", "bursar-direct"},
}

// evalMonths are the calendar months scored: the chain starts on 2025-01-06, so March is the
// first month with a whole month of history before it.
var evalMonths = []time.Month{time.March, time.April, time.May, time.June, time.July}

// dayStats sums, for one day of the month, the forecasts made at its end over the scope-months.
type dayStats struct {
	n                 int
	absErr, linAbsErr float64 // sums of |forecast - outcome| / outcome
	covered           int
	models, intervals map[string]int
}

// tuneMonths are the months the interval's width was chosen on (forecast.lowQ); the others
// are held out.
var tuneMonths = []time.Month{time.March, time.April}

// evaluate forecasts each scope's month-end spend at the end of every day of each month, from
// the historyWeeks before; the statistics by month and day of month.
func evaluate(scopes []scope, months []time.Month) (map[time.Month]*[32]dayStats, error) {
	out := map[time.Month]*[32]dayStats{}
	for _, m := range months {
		out[m] = new([32]dayStats)
	}
	for _, sc := range scopes {
		for _, m := range months {
			days := out[m]
			start := time.Date(2025, m, 1, 0, 0, 0, 0, time.UTC)
			end := start.AddDate(0, 1, 0)
			outcome := sum(sc.spend, start, end)
			if outcome <= 0 {
				continue
			}
			for d := 1; start.AddDate(0, 0, d).Before(end); d++ {
				now := start.AddDate(0, 0, d)
				from := now.AddDate(0, 0, -7*historyWeeks)
				if from.Before(costseries.Epoch) {
					from = costseries.Epoch
				}
				h := forecast.History{Start: from, Values: slice(sc.spend, from, now)}
				f, err := forecast.Sum(h, forecast.Period{Start: start, End: end, Now: now})
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", sc.name, now.Format(time.DateOnly), err)
				}
				s := &days[d]
				if s.models == nil {
					s.models, s.intervals = map[string]int{}, map[string]int{}
				}
				s.n++
				s.absErr += math.Abs(f.Expected-outcome) / outcome
				s.linAbsErr += math.Abs(f.Linear-outcome) / outcome
				if f.Low <= outcome && outcome <= f.High {
					s.covered++
				}
				s.models[f.Model]++
				s.intervals[f.Interval]++
			}
		}
	}
	return out, nil
}

// merge sums the statistics of the months given.
func merge(by map[time.Month]*[32]dayStats, months []time.Month) [32]dayStats {
	var out [32]dayStats
	for _, m := range months {
		for d, s := range by[m] {
			o := &out[d]
			o.n += s.n
			o.absErr += s.absErr
			o.linAbsErr += s.linAbsErr
			o.covered += s.covered
			for k, v := range s.models {
				if o.models == nil {
					o.models, o.intervals = map[string]int{}, map[string]int{}
				}
				o.models[k] += v
			}
			for k, v := range s.intervals {
				o.intervals[k] += v
			}
		}
	}
	return out
}

func index(t time.Time) int { return int(t.Sub(costseries.Epoch).Hours()) }

func slice(v []float64, from, to time.Time) []float64 { return v[index(from):index(to)] }

func sum(v []float64, from, to time.Time) float64 {
	t := 0.0
	for _, x := range slice(v, from, to) {
		t += x
	}
	return t
}

// summary is the benchmark's figures: mean absolute error at days 7 and 20, and the interval's
// coverage over every day of every scope-month.
type summary struct {
	day7, day20, lin7, lin20, coverage float64
}

func summarize(days [32]dayStats) summary {
	var s summary
	cov, n := 0, 0
	for d := range days {
		cov += days[d].covered
		n += days[d].n
	}
	pct := func(x float64, n int) float64 { return 100 * x / float64(max(n, 1)) }
	s.day7, s.lin7 = pct(days[7].absErr, days[7].n), pct(days[7].linAbsErr, days[7].n)
	s.day20, s.lin20 = pct(days[20].absErr, days[20].n), pct(days[20].linAbsErr, days[20].n)
	s.coverage = pct(float64(cov), n)
	return s
}

// printModels says which models and intervals gave the forecasts.
func printModels(w io.Writer, days [32]dayStats) {
	models, intervals := map[string]int{}, map[string]int{}
	for _, s := range days {
		for k, v := range s.models {
			models[k] += v
		}
		for k, v := range s.intervals {
			intervals[k] += v
		}
	}
	fmt.Fprintf(w, "models %v, intervals %v\n", models, intervals)
}

// printTable writes the error by day of month beside the burn rate's, and the coverage.
func printTable(w io.Writer, title string, days [32]dayStats) {
	fmt.Fprintf(w, "\n%s\n| day | forecasts | Bursar MAPE %% | burn-rate MAPE %% | 80 %% interval coverage %% |\n|---:|---:|---:|---:|---:|\n", title)
	for d := 1; d < len(days); d++ {
		s := days[d]
		if s.n == 0 {
			continue
		}
		fmt.Fprintf(w, "| %d | %d | %.1f | %.1f | %.0f |\n", d, s.n, 100*s.absErr/float64(s.n),
			100*s.linAbsErr/float64(s.n), 100*float64(s.covered)/float64(s.n))
	}
	s := summarize(days)
	fmt.Fprintf(w, "day 7: %.1f %% (burn rate %.1f %%); day 20: %.1f %% (burn rate %.1f %%); coverage %.1f %%\n",
		s.day7, s.lin7, s.day20, s.lin20, s.coverage)
}

// BenchmarkForecast backtests the month-end spend forecast on the chained replays' scopes. Run
// it once: go test -run '^$' -bench BenchmarkForecast -benchtime 1x ./internal/forecast/bench/
func BenchmarkForecast(b *testing.B) {
	ss, err := costseries.Replay(context.Background(), replays)
	if errors.Is(err, costseries.ErrNoData) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	scopes := chain(ss)
	b.ResetTimer()
	var by map[time.Month]*[32]dayStats
	for range b.N {
		if by, err = evaluate(scopes, evalMonths); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	days := merge(by, evalMonths)
	held := slices.DeleteFunc(slices.Clone(evalMonths), func(m time.Month) bool { return slices.Contains(tuneMonths, m) })
	blocks := 0
	for _, sc := range scopes {
		blocks += sc.blocks
	}
	fmt.Fprintf(os.Stdout, "\n%d scopes (%d series-weeks of replays, a moving-block bootstrap of %d week-long blocks into %d days each), months %v\n",
		len(scopes), int(costseries.TotalWeeks(ss)), blocks, chainDays, evalMonths)
	printTable(os.Stdout, "Month-end spend forecast by day of month", days)
	for _, part := range []struct {
		name   string
		months []time.Month
	}{{"tuning months", tuneMonths}, {"held-out months", held}} {
		s := summarize(merge(by, part.months))
		fmt.Fprintf(os.Stdout, "%s %v: day 7 %.1f %% (burn rate %.1f %%), day 20 %.1f %% (burn rate %.1f %%), coverage %.1f %%\n",
			part.name, part.months, s.day7, s.lin7, s.day20, s.lin20, s.coverage)
	}
	printModels(os.Stdout, days)
	s := summarize(days)
	b.ReportMetric(s.day7, "mape_day7_pct")
	b.ReportMetric(s.day20, "mape_day20_pct")
	b.ReportMetric(s.coverage, "interval_coverage_pct")
	b.ReportMetric(s.lin7, "burn_rate_mape_day7_pct")
	b.ReportMetric(s.lin20, "burn_rate_mape_day20_pct")
}
