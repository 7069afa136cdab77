// Command report turns Bursar's history into the numbers a platform lead and a FinOps analyst
// ask for: cost, cost per GPU-hour and per million tokens, savings, idle GPUs, FOCUS exports.
package main

import (
	"os"

	"github.com/bursar-dev/bursar/internal/cli"
)

func main() {
	var g cli.Globals
	root := cli.Root("report", "Cost, tokens, savings and idle-GPU reports from Bursar's history",
		`report reads Bursar's history in ClickHouse and prints reports as tables, JSON or CSV.

It reads the ClickHouse server named by --clickhouse, or else asks the running arbiter (over
NATS, default 127.0.0.1:4222) for the embedded store it owns.`,
		&g, cli.DefaultNATS, "NATS URL of the running arbiter")
	root.AddCommand(newStreamsCmd(&g), newCostCmd(&g), newTokensCmd(&g), newSavingsCmd(&g), newIdleCmd(&g),
		newBudgetCmd(&g), newReclaimsCmd(&g), newCommitmentsCmd(&g), newFocusCmd(&g), newServeCmd(&g))
	os.Exit(cli.Main(root))
}
