package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newCommitmentsCmd is `report commitments`: the floor worth reserving per GPU model.
func newCommitmentsCmd(g *cli.Globals) *cobra.Command {
	var pct, discount float64
	cmd, _ := reportCmd(g, "commitments", "The steady floor of GPUs in use per model and what reserving it would save",
		`  report commitments --period 30d
  report commitments --percentile 20 --discount 0.4 -o json`,
		false, false,
		func(r report.Request) report.Request { r.Percentile, r.Discount = pct, discount; return r })
	cmd.Flags().Float64Var(&pct, "percentile", 10, "percentile of hourly GPUs in use taken as the floor")
	cmd.Flags().Float64Var(&discount, "discount", 0.3, "reservation discount off the on-demand list price, 0..1")
	return cmd
}
