package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/anomalywatch"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newAnomaliesCmd is `report anomalies`: the cost anomalies the arbiter found, and the answers
// people gave them in Slack.
func newAnomaliesCmd(g *cli.Globals) *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "anomalies",
		Short: "Cost anomalies found in the window: series, start, detection, state, expected and observed $/h, impact, what moved, the answer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := f.result(cmd, g, "anomalies", false, nil)
			if err != nil {
				return err
			}
			if len(res.Rows) > 0 {
				fillAnswers(cmd.Context(), g, res)
			}
			return f.emit(cmd, res)
		},
	}
	f.bind(cmd, "", false)
	cmd.Long = `anomalies lists the cost anomalies the arbiter's watcher published (cost.anomaly, table
cost_anomaly) that were going on in the window: one row per anomaly.

Columns:
  series                 the scope whose spend moved: workload=…, team=… or budget=…; with
                         #usd-per-gpu-hour, its unit price ($ per GPU-hour) rather than its spend
  start, detected        the first step out of the baseline, and when the detector knew
  detect_min             minutes from start to detected
  state                  open, update (still going on) or closed; end is when it closed
  expected_usd_per_hour  the baseline when it opened
  observed_usd_per_hour  the highest rate it reached
  impact_usd             spend above the baseline from start to its close (or its last update)
  moved                  the series that explain it (location, GPU model, market, workload)
  answer                 what a person answered in Slack (expected / not expected, and who), read
                         from the arbiter's answers bucket over NATS; empty when nobody answered or
                         no NATS is reachable (a note says which)`
	cmd.Example = `  report anomalies --period 7d
  report anomalies --since 2026-12-01 -o csv > anomalies.csv
  report anomalies -o json`
	return cmd
}

// fillAnswers adds the answers people gave to res's anomalies, from the answers bucket; where the
// bus cannot be reached the answers stay empty and a note says why.
func fillAnswers(ctx context.Context, g *cli.Globals, res *report.Result) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	words, err := readAnswers(dctx, g)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("answers not shown: %v", err))
	}
	report.FillAnswers(res.Rows, words)
}

func readAnswers(ctx context.Context, g *cli.Globals) (map[string]string, error) {
	nc, js, err := g.Dial(ctx, "", bus.RoleReport, "report", slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("reaching NATS for the answers bucket: %w", err)
	}
	defer nc.Close()
	kv, err := bus.ReadOnly(js).KeyValue(ctx, bus.BucketAnomalyAnswers)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", bus.BucketAnomalyAnswers, err)
	}
	return anomalywatch.Words(ctx, kv)
}
