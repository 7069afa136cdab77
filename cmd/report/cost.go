package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
)

// newCostCmd is `report cost`: spend, GPU-hours, cost per GPU-hour and market shares.
func newCostCmd(g *cli.Globals) *cobra.Command {
	cmd, f := reportCmd(g, "cost", "Spend, GPU-hours, cost per GPU-hour and spot/on-demand/reserved shares",
		`  report cost --by workload,market --period 7d
  report cost --period 30d --by provider -o csv > cost.csv
  report cost --since 2026-11-01 --until 2026-12-01 --basis billed`,
		true, false, nil)
	f.bindBasis(cmd)
	return cmd
}
