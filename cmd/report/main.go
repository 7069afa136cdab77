// Command report turns Bursar's history into the numbers a platform lead and a FinOps analyst
// ask for: cost, cost per GPU-hour and per million tokens, savings, idle GPUs, reclaims, availability,
// commitments, FOCUS exports.
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
)

func main() {
	var g cli.Globals
	os.Exit(cli.Main(newRoot(&g)))
}

// newRoot builds the command tree.
func newRoot(g *cli.Globals) *cobra.Command {
	root := cli.Root("report", "Cost, tokens, savings, idle-GPU, reclaim and availability reports from Bursar's history",
		`report reads Bursar's history in ClickHouse and prints reports as tables, JSON, YAML, CSV or markdown
(-o/--output table|json|yaml|csv|markdown on every report; tables and markdown add notes under
the rows).

It reads the ClickHouse server named by --clickhouse, or else asks the running arbiter (over
NATS, default 127.0.0.1:4222) for the embedded store it owns.`,
		g, cli.DefaultNATS, "NATS URL of the running arbiter")
	root.AddCommand(newConsoleCmd(g), newStreamsCmd(g), newCostCmd(g), newTokensCmd(g), newSavingsCmd(g), newIdleCmd(g),
		newBudgetCmd(g), newForecastCmd(g), newReclaimsCmd(g), newAnomaliesCmd(g), newAvailabilityCmd(g), newCommitmentsCmd(g), newFocusCmd(g), newImportBillingCmd(g),
		newReconcileCmd(g), newJobsCmd(g), newServeCmd(g))
	root.Example = `  report cost --period 7d
  report availability --by workload -o json`
	cli.DocumentEnv(root)
	return root
}
