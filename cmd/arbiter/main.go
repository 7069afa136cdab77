// Command arbiter consumes Bursar's events, plans placement, enforces budgets and applies actions.
// With no --nats it runs an embedded NATS server, so one command runs the whole system.
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
	root := cli.Root("arbiter", "Bursar's control loop: placement, budgets and actions",
		`arbiter consumes price, reclaim and telemetry events from NATS JetStream, keeps the fleet's
state, plans where each workload's replicas should run, and applies the plan through actuators.

With no --nats URL, "arbiter run" starts an embedded NATS server with JetStream on
127.0.0.1:4222 (its files under --data-dir), so collector and report find it by default.`,
		g, "", "NATS URL; empty: start an embedded NATS server (see --listen)")
	root.Example = `  arbiter run --config examples/bursar.yaml
  arbiter status -o json`
	root.AddCommand(newRunCmd(g), newRecordCmd(g), newReplayCmd())
	root.AddCommand(newConfigCmd(), newStatusCmd(g))
	root.AddCommand(newBudgetCmd(g), newJobCmd(g))
	root.AddCommand(newDemoCmd(g), newConsoleCmd(g))
	cli.DocumentEnv(root)
	return root
}
