package main

import (
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// newJobsCmd is `report jobs`: per deadline-bound job, cost, GPU-hours, deadline met, savings
// against on-demand and time lost to preemptions.
func newJobsCmd(g *cli.Globals) *cobra.Command {
	var jobs, teams []string
	cmd, f := reportCmd(g, "jobs", "Per job: cost, GPU-hours, deadline met, savings against on-demand, time lost to preemptions",
		"",
		false, false,
		func(r report.Request) report.Request { r.Jobs, r.Teams = jobs, teams; return r })
	cmd.Long = `jobs reads job.state (what the arbiter published at each change of a deadline-bound job) and
gives one row per job that was submitted before the window's end and was active in the window or
changed state in it:

  state          the job's state at the window's end (submitted, running, waiting,
                 checkpointing, finished, cancelled, failed)
  deadline_met   met or missed once finished; missed when unfinished past the deadline (or
                 failed); pending before it; cancelled
  work_h         the work the job needs, in hours at one replica; done_pct how much is done
  gpu_hours      GPU-hours it ran, up to the window's end
  usd            what it cost, up to the window's end
  on_demand_usd  the same work on on-demand: the work plus one overhead at the on-demand price
                 of the job's offers (job.state's on_demand_usd_per_hour, or for a job the fleet
                 file names, the cheapest on-demand offer seen where it may run); savings_usd
                 and savings_pct are against it
  preemptions    reclaims the job lived through; lost_h the time they and the (re)launch
                 overheads cost it
  basis          how usd was priced: estimated (or billed, with --basis billed) from the
                 job's replica.state as report cost prices a workload, over its whole life; or
                 arbiter, the arbiter's own running total (job.state's usd_spent), where no
                 replica.state priced it

Keep some jobs with --job and --team (comma-separated or repeated); --by and --filter do not
apply.`
	cmd.Example = `  report jobs --period 7d
  report jobs --team research -o json
  report jobs --job finetune-7b,eval-70b --since 2026-11-01`
	fl := cmd.Flags()
	fl.StringSliceVar(&jobs, "job", nil, "keep only these jobs (comma-separated, repeatable)")
	fl.StringSliceVar(&teams, "team", nil, "keep only the jobs of these teams (comma-separated, repeatable)")
	f.bindBasis(cmd)
	for _, name := range []string{"by", "filter"} {
		if err := fl.MarkHidden(name); err != nil {
			panic(err) // both are bound by reportCmd
		}
	}
	return cmd
}
