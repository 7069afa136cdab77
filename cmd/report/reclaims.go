package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
)

// newReclaimsCmd is `report reclaims`: notices, time to replacement and time to first GPU.
func newReclaimsCmd(g *cli.Globals) *cobra.Command {
	cmd, _ := reportCmd(g, "reclaims", "Reclaims by provider, zone and GPU model: notice, time to replacement, time to first GPU",
		"",
		false, false, nil)
	cmd.Long = `reclaims counts spot reclaim notices (capacity.reclaimed) and says how the fleet answered them.

Columns:
  reclaims                 notices in the window
  avg_notice_s             deadline minus notice time
  replaced                 notices whose workload got a replacement replica ready
  replaced_by_deadline     of those, ready by the notice's deadline
  avg_to_replacement_s     notice to the replacement ready (also median_to_replacement_s)
  launches                 launch actions whose first replica became ready
  avg_to_first_gpu_s       capacity request (launch proposed, or approved) to its first replica ready
  launches_failed          launches the arbiter gave up (no capacity, or not ready within the
                           location's launch_timeout) and placed elsewhere

A notice names an instance, not what ran on it: the GPU model and workload are those replica.state
shows ready at the notice's location and zone at the notice time (spot first). Where several ran,
they are joined with "+"; where nothing did, "unknown". A replacement is the earliest ready replica
of that workload (any location or market) reported at or after the notice that no earlier notice
took. Ready times are as seen in replica.state, so within one report interval of the truth.

Without --by, rows are by provider, location, zone, GPU model and kind, and the time to first GPU
of a row is over launches at that location and GPU model; the notes under the table give it per
provider; launches given up are rows of kind launch_failed, by the zone of the offer they asked for.
With --by (workload, location, provider, region, market, gpu), rows are by those, and launches
where nothing was reclaimed get rows of their own.`
	cmd.Example = `  report reclaims --period 7d
  report reclaims --by gpu
  report reclaims --by provider -o json      # time to first GPU per provider as data
  report reclaims --by provider,gpu --filter provider=aws -o markdown`
	return cmd
}
