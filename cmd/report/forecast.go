package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newForecastCmd is `report forecast`: where each budget scope's period will end.
func newForecastCmd(g *cli.Globals) *cobra.Command {
	var file, fleetFile, output, history, at string
	cmd := &cobra.Command{
		Use:   "forecast",
		Short: "Period-end forecasts of spend, GPU-hours and cost per million tokens per budget scope",
		Long: `forecast predicts where each budget policy's current period (its day, week or month) will end
for spend, GPU-hours and cost per million tokens, from the hourly history: spent so far, the
forecast, its 80 % interval and its own backtested error, and beside them the burn-rate forecast
(so far + the latest hour's rate until the period ends) with its error. Policies come from the
budgets bucket in NATS KV, or from a policy file with -f. docs/forecasts.md says how the forecast
is made and how accurate it has measured.`,
		Example: `  report forecast
  report forecast -f budgets/llm.yaml --history 8w -o json
  report forecast -f budgets/llm.yaml --at 2026-11-20T12:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := forecastWindow(history, at, time.Now().UTC())
			if err != nil {
				return err
			}
			return runOnPolicies(cmd, g, file, fleetFile, output, "forecast", report.Options{Window: w, Now: w.Until})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "", "read policies from this YAML file instead of NATS KV")
	fl.StringVar(&fleetFile, "fleet", "bursar.yaml", "fleet file, for workloads' teams")
	fl.StringVar(&history, "history", "12w", "hourly history to forecast from, ending at --at, e.g. 8w or 60d (at least 4d for a seasonal forecast)")
	fl.StringVar(&at, "at", "", "forecast as of this time: RFC 3339 or a date, UTC (default now)")
	cli.OutputFlag(cmd, &output, report.Formats...)
	return cmd
}

// forecastWindow reads --history and --at: the window of history the forecast reads, ending at
// the time it is made for, which may not be later than now.
func forecastWindow(history, at string, now time.Time) (report.Window, error) {
	until := now
	if at != "" {
		t, err := report.ParseTime(at)
		if err != nil {
			return report.Window{}, fmt.Errorf("--at: %w", err)
		}
		if t.After(now) {
			return report.Window{}, fmt.Errorf("--at %s is later than now (%s): a forecast is made from history already recorded",
				t.Format(time.RFC3339), now.Format(time.RFC3339))
		}
		until = t
	}
	d, err := report.ParsePeriod(history)
	if err != nil {
		return report.Window{}, fmt.Errorf("--history: %w", err)
	}
	if d < time.Hour || d > report.MaxForecastHistory {
		return report.Window{}, fmt.Errorf("--history %s: want from 1h to %s (e.g. 12w)", history, report.MaxForecastHistory)
	}
	return report.Window{Since: until.Add(-d).Truncate(time.Hour), Until: until}, nil
}
