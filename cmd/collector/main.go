// Command collector gathers GPU prices, spot reclaim notices, GPU telemetry and token counters
// and publishes them as events to NATS JetStream.
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
	root := cli.Root("collector", "Publish GPU prices, reclaim notices and telemetry to Bursar",
		`collector runs Bursar's sources on schedules and publishes what they see as events:
prices from the providers' APIs and price files, spot reclaim notices from instance metadata,
GPU samples from NVML and token counters scraped from inference servers.

By default it publishes to the embedded NATS server that "arbiter run" starts on
127.0.0.1:4222. "collector prices" fetches once and prints, for a person checking what Bursar sees.`,
		g, cli.DefaultNATS, "NATS URL to publish to")
	root.Example = `  collector config check examples/collector.yaml
  collector run --config examples/collector.yaml`
	root.AddCommand(newPricesCmd(), newRunCmd(g), newConfigCmd())
	cli.DocumentEnv(root)
	return root
}
