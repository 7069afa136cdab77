package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newTokensCmd is `report tokens`: tokens served and cost per million tokens.
func newTokensCmd(g *cli.Globals) *cobra.Command {
	var weight float64
	cmd, f := reportCmd(g, "tokens", "Tokens served and cost per million tokens, blended and input/output",
		`  report tokens --period 7d
  report tokens --since 2026-11-01 --until 2026-12-01 --by workload -o json
  report tokens --since 2026-11-01 --until 2026-12-01 --basis billed`,
		true, false,
		func(r report.Request) report.Request { r.OutputWeight = weight; return r })
	cmd.Flags().Float64Var(&weight, "output-weight", report.DefaultOutputWeight,
		"cost of an output token in input tokens, for the input/output split")
	f.bindBasis(cmd)
	return cmd
}
