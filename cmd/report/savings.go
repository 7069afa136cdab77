package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
)

// newSavingsCmd is `report savings`: against on-demand list prices, here and anywhere allowed.
func newSavingsCmd(g *cli.Globals) *cobra.Command {
	cmd, f := reportCmd(g, "savings", "Savings against on-demand list prices, and what the arbitrage cost",
		`  report savings --fleet bursar.yaml --by location
  report savings --period 30d -o markdown --chart savings.png > savings.md`,
		true, true, nil)
	f.bindBasis(cmd)
	return cmd
}
