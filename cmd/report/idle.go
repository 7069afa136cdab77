package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newIdleCmd is `report idle`: GPU-hours paid for but idle.
func newIdleCmd(g *cli.Globals) *cobra.Command {
	var threshold float64
	var gap time.Duration
	cmd, _ := reportCmd(g, "idle", "GPU-hours paid for but idle, and their cost",
		`  report idle --period 7d
  report idle --threshold 10 --by provider,gpu -o csv`,
		false, false,
		func(r report.Request) report.Request { r.Threshold, r.MaxGap = threshold, gap; return r })
	cmd.Flags().Float64Var(&threshold, "threshold", 5, "utilization percent below which a GPU is idle")
	cmd.Flags().DurationVar(&gap, "max-gap", 5*time.Minute, "longest a GPU sample speaks for")
	return cmd
}
