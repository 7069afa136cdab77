package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newAvailabilityCmd is `report availability`: time with at least the target ready replicas.
func newAvailabilityCmd(g *cli.Globals) *cobra.Command {
	var target string
	cmd, _ := reportCmd(g, "availability", "Share of time each workload had its target of ready replicas, downtime and outages",
		"",
		false, false,
		func(r report.Request) report.Request { r.Target = target; return r })
	cmd.Long = `availability reads replica.state (ready and desired replicas, as the arbiter observed them) and
gives, per group of --by (workload, location, provider, region or market; not gpu):

  observed_h          hours from the window's start (or the group's first report) to its end or now
  available_pct_of_T  share of that time with at least the target T ready (the column names it:
                      available_pct_of_desired, available_pct_of_min, available_pct_of_2)
  downtime_min        minutes below the target
  outages             stretches below the target
  ready_replica_h     ready replica-hours, against desired_replica_h; ready_share is their ratio
  launches_failed     launches the arbiter gave up (no capacity, or not ready in time)

The target is what replica.state says was desired (--target desired, the default), the workload's
replicas.min from the fleet file (--target min, with --by workload), or a fixed number of replicas
(--target 2). A group's ready and desired replicas are the sums over its workloads' locations and
markets, each at its latest report.`
	cmd.Example = `  report availability --period 30d
  report availability --by workload,location -o markdown
  report availability --target min --fleet bursar.yaml
  report availability --by provider --filter market=spot -o csv`
	cmd.Flags().StringVar(&target, "target", "desired", "ready replicas a group needs to count as up: desired, min (fleet file, --by workload) or a number")
	return cmd
}
