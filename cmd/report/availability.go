package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newAvailabilityCmd is `report availability`: time with at least the target ready replicas, or
// (--target capacity) minutes with enough ready capacity for the demand.
func newAvailabilityCmd(g *cli.Globals) *cobra.Command {
	var target string
	cmd, f := reportCmd(g, "availability", "Share of time each workload had its target of ready replicas, downtime and outages",
		"",
		false, false,
		func(r report.Request) report.Request { r.Target = target; return r })
	cmd.PreRunE = func(*cobra.Command, []string) error { return checkCapacityFlags(target, f) }
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
markets, each at its latest report.

--target capacity (with --by workload and --fleet) asks instead whether the ready replicas could
serve the demand, for each workload whose scaling.metric is tokens_per_second,
output_tokens_per_second or requests_per_second and whose fleet entry gives what one replica serves
(serving.per_replica per GPU model, or scaling.per_replica). Per whole minute of the window, demand
is the workload's token counters' increase in that minute (prompt + generated tokens, generated
only, or requests, as its metric), and capacity is what its ready replicas, each at its GPU model's
rate, could serve in that minute:

  observed_min               whole minutes from the workload's first replica.state report on
  short_min                  minutes whose demand exceeded their capacity
  available_pct_of_capacity  share of observed minutes not short (a minute with no demand is not)
  unserved_pct               demand beyond capacity over all demand, in percent
  availability_target_pct    serving.availability_target from the fleet file (empty: none)
  target_met                 yes when available_pct_of_capacity reaches it, no, or - (no target)`
	cmd.Example = `  report availability --period 30d
  report availability --by workload,location -o markdown
  report availability --target min --fleet bursar.yaml
  report availability --target capacity --fleet bursar.yaml --period 7d
  report availability --by provider --filter market=spot -o csv`
	cmd.Flags().StringVar(&target, "target", "desired",
		"what a group needs to count as up: desired, min (fleet file, --by workload), a number of ready replicas, or capacity (enough ready capacity for the demand; fleet file, --by workload)")
	return cmd
}

// checkCapacityFlags refuses --target capacity without what it needs before any store is opened:
// the rates and targets are in the fleet file, and demand is summed over a workload's locations.
func checkCapacityFlags(target string, f *reportFlags) error {
	if target != report.CapacityTarget {
		return nil
	}
	if by, err := report.ParseDims(f.by); err == nil && !slices.Equal(by, []report.Dim{report.Workload}) {
		return fmt.Errorf("--target capacity compares a workload's demand with its capacity over all its locations: use it with --by workload, not --by %s", f.by)
	}
	if f.fleetFile == "" {
		return fmt.Errorf("--target capacity: the workloads' rates per GPU model and availability targets come from the fleet file: give --fleet")
	}
	if _, err := os.Stat(f.fleetFile); err != nil {
		return fmt.Errorf("--target capacity: the workloads' rates per GPU model come from the fleet file, and %s cannot be read (%w): give --fleet", f.fleetFile, err)
	}
	return nil
}
