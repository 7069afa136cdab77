package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/jobreplay"
)

// replayJobFlags are the flags `arbiter replay --jobs` adds: the job replay of ../shared/JOBS.md.
type replayJobFlags struct {
	on bool
	o  jobreplay.Options
}

// servingOnly are the serving replay's flags that mean nothing to a job replay: giving one with
// --jobs is an error, not a silent no-op.
var servingOnly = []string{"binary-capacity", "target", "extra", "cold-start", "tick", "window", "seed", "offsets", "od-price-ratio"}

// addJobFlags registers --jobs and its flags on the replay command.
func addJobFlags(cmd *cobra.Command, jf *replayJobFlags) {
	jf.o = jobreplay.DefaultOptions()
	f := cmd.Flags()
	f.BoolVar(&jf.on, "jobs", false, "replay a deadline-bound, checkpointed job (../shared/JOBS.md) instead of serving replicas")
	f.DurationVar(&jf.o.Deadline, "deadline", jf.o.Deadline, "with --jobs: the job's deadline from its start (whole seconds)")
	f.DurationVar(&jf.o.Work, "work", jf.o.Work, "with --jobs: compute the job needs on one replica")
	f.DurationVar(&jf.o.Overhead, "overhead", jf.o.Overhead, "with --jobs: billed, unproductive time per (re)launch (loading the checkpoint)")
	f.StringVar(&jf.o.Zones, "zones", jf.o.Zones, "with --jobs: single (each file its own market) or all (every file a zone the job may use)")
	cmd.Long += "\n\nWith --jobs it replays one deadline-bound job instead (the Can't-Be-Late rules of ../shared/JOBS.md):\n" +
		"each trace file is a market of spot (a value >= 1: available) and on-demand at 3.06 vs 0.9731 USD/h;\n" +
		"windows of 92.33 h per file (--windows, default 30); per policy the mean cost per job, its share of\n" +
		"on-demand only, and the deadlines met. Job policies: " + strings.Join(jobreplay.PolicyNames(), ", ") + ".\n" +
		"--zones all lets the job use every file's zone at once and shows each policy's best single zone beside it."
	cmd.Example += "\n  # $TRACES: the folder holding the cant-be-late traces (../shared/data/traces in the workspace)\n" +
		"  arbiter replay --jobs --trace \"$TRACES/cant-be-late/availability-1node-aws-10-26-2022\" \\\n" +
		"    --policy od,greedy,uniform-progress,optimal --deadline 52h --work 48h --overhead 3m -o json\n" +
		"  arbiter replay --jobs --trace \"$TRACES/cant-be-late/preemption-1node-aws-04-22-2023\" --windows 10 \\\n" +
		"    --zones all --policy greedy,uniform-progress,bursar-direct --deadline 70h --overhead 12m"
}

// runReplayJobs is `arbiter replay --jobs`: it checks the flags and hands them to jobreplay.Replay.
func runReplayJobs(cmd *cobra.Command, trace, policies string, windows int, jf *replayJobFlags, output string) error {
	for _, name := range servingOnly {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s is a serving replay flag and means nothing with --jobs: drop it "+
				"(a job replay runs on each trace file's own gap_seconds)", name)
		}
	}
	o := jf.o
	o.TraceDir, o.Policies = trace, policies
	if cmd.Flags().Changed("windows") {
		o.Windows = windows
	}
	o.Output = output
	if output != "yaml" {
		return jobreplay.Replay(cmd.Context(), o, cmd.OutOrStdout())
	}
	o.Output = "json"
	var b bytes.Buffer
	if err := jobreplay.Replay(cmd.Context(), o, &b); err != nil {
		return err
	}
	return cli.JSONToYAML(cmd.OutOrStdout(), b.Bytes())
}

// jobOnly are --jobs' own flags: giving one without --jobs is an error.
var jobOnly = []string{"deadline", "work", "overhead", "zones"}

// checkNoJobFlags refuses job flags on a serving replay.
func checkNoJobFlags(cmd *cobra.Command) error {
	for _, name := range jobOnly {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s applies to job replays: add --jobs, or drop it for a serving replay", name)
		}
	}
	return nil
}
