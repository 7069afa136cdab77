package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/replay"
)

// newReplayCmd is `arbiter replay`: the trace-replay benchmark of placement policies under the
// SkyServe simulation's rules (../shared/REPLAY.md). It only parses flags; replay.Run does the work.
func newReplayCmd() *cobra.Command {
	o := replay.DefaultOptions()
	var offsets, output string
	var jf replayJobFlags
	var sf servingFlags
	cmd := &cobra.Command{
		Use:   "replay --trace DIR --policy LIST",
		Short: "Compare placement policies on a recorded spot-capacity trace",
		Long: "Replays a spot-capacity trace (a folder with one JSON file per zone) through each policy on the\n" +
			"same windows, under the SkyServe (EuroSys'25) simulation rules, and prints each policy's\n" +
			"availability and cost as a percentage of running the target on on-demand.\n\n" +
			"Policies: " + strings.Join(replay.PolicyNames(), ", ") + ". Append :E to give a policy its own\n" +
			"number of extra spot replicas, e.g. even-spread:0,even-spread:1.",
		Example: "  arbiter replay --trace examples/demo/trace --policy spothedge,bursar,optimal \\\n" +
			"    --window 10h --windows 1 --offsets 0 --tick 60s --cold-start 3m\n" +
			"  arbiter replay --trace examples/demo/trace --policy even-spread:0,even-spread:1,spothedge \\\n" +
			"    --window 2h --windows 5 --seed 7 --tick 60s -o json",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sf.on {
				return runReplayServing(cmd, &sf, o, output)
			}
			if err := checkNoServingFlags(cmd); err != nil {
				return err
			}
			if jf.on {
				return runReplayJobs(cmd, o.TraceDir, o.Policies, o.Windows, &jf, output)
			}
			if err := checkNoJobFlags(cmd); err != nil {
				return err
			}
			list, err := parseOffsets(offsets)
			if err != nil {
				return err
			}
			if list != nil && cmd.Flags().Changed("windows") && len(list) != o.Windows {
				return fmt.Errorf("--windows %d but --offsets lists %d windows: give one or the other", o.Windows, len(list))
			}
			o.Offsets = list
			return runReplay(cmd, o, output)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.TraceDir, "trace", "", "folder with one {\"metadata\":{\"gap_seconds\":N},\"data\":[...]} file per zone (required)")
	f.BoolVar(&o.BinaryCapacity, "binary-capacity", false, "read 1 as available with unlimited capacity and 0 as none (0/1 traces)")
	f.StringVar(&o.Policies, "policy", "", "comma-separated policies to compare (required): "+strings.Join(replay.PolicyNames(), ", "))
	f.IntVar(&o.Target, "target", o.Target, "replicas that must be ready")
	f.IntVar(&o.Extra, "extra", o.Extra, "extra spot replicas the baselines and SpotHedge keep")
	f.DurationVar(&o.ColdStart, "cold-start", o.ColdStart, "time from launch to ready (rounded up to whole ticks)")
	f.DurationVar(&o.Tick, "tick", o.Tick, "simulation tick; each trace file's gap_seconds must be a multiple of it")
	f.DurationVar(&o.Window, "window", o.Window, "length of one window (cut to whole ticks)")
	f.IntVar(&o.Windows, "windows", o.Windows, "windows to draw from --seed when --offsets is not given")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed for drawn windows and the policies' random choices")
	f.StringVar(&offsets, "offsets", "", "comma-separated window starts in ticks, instead of drawing them")
	f.Float64Var(&o.ODPriceRatio, "od-price-ratio", o.ODPriceRatio, "on-demand price in units of the spot price")
	cli.OutputFlag(cmd, &output, "table", "json", "yaml")
	addJobFlags(cmd, &jf)
	addServingFlags(cmd, &sf)
	_ = cmd.MarkFlagRequired("trace")
	_ = cmd.MarkFlagRequired("policy")
	return cmd
}

// runReplay runs the replay and prints it as output asks: YAML is its JSON re-encoded.
func runReplay(cmd *cobra.Command, o replay.Options, output string) error {
	o.Output = output
	if output != "yaml" {
		return replay.Run(cmd.Context(), o, cmd.OutOrStdout())
	}
	o.Output = "json"
	var b bytes.Buffer
	if err := replay.Run(cmd.Context(), o, &b); err != nil {
		return err
	}
	return cli.JSONToYAML(cmd.OutOrStdout(), b.Bytes())
}

// parseOffsets reads --offsets; empty means "draw them".
func parseOffsets(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, item := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(item))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--offsets: %q is not a tick number >= 0", item)
		}
		out = append(out, n)
	}
	return out, nil
}
