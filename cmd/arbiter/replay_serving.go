package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/replay"
	"github.com/bursar-dev/bursar/internal/serving"
)

// servingFlags are `arbiter replay --serving`'s own flags (../shared/SERVING.md).
type servingFlags struct {
	on       bool
	demands  []string
	profile  string
	capacity string
	data     string
	scale    float64
	model    string
	tpot     int
}

// replicaOnly are the replica replay's flags: with --serving they are an error, not a no-op.
var replicaOnly = []string{"trace", "binary-capacity", "target", "extra", "tick", "offsets", "od-price-ratio", "jobs"}

// servingOwn are --serving's own flags: without --serving they are an error.
var servingOwn = []string{"demand", "profile", "capacity", "data", "demand-scale", "model", "tpot-ms"}

// addServingFlags registers --serving and its flags on the replay command. --policy, --windows,
// --seed, --cold-start and --output are shared with the replica replay; with --serving, --trace
// and --policy are no longer required.
func addServingFlags(cmd *cobra.Command, sf *servingFlags) {
	q := serving.DefaultProfileQuery()
	f := cmd.Flags()
	f.BoolVar(&sf.on, "serving", false, "replay token demand through serving policies on GPU types, zones, spot and on-demand (../shared/SERVING.md)")
	f.StringArrayVar(&sf.demands, "demand", nil, "with --serving: per-minute CSV minute,requests,input_tokens,output_tokens; repeat for several runs (default: the ServeGen m-large and m-mid traces)")
	f.StringVar(&sf.profile, "profile", "", "with --serving: throughput table (default: the Splitwise table under --data)")
	f.StringVar(&sf.capacity, "capacity", "", "with --serving: folder with h100_probes.csv and spot_price_cache_gcp/ (default: the SkyNomad probes under --data)")
	f.StringVar(&sf.data, "data", serving.DefaultData, "with --serving: the shared data folder the defaults and the price catalogs are read from")
	f.Float64Var(&sf.scale, "demand-scale", 0, "with --serving: multiply demand by this (default: the trace's peak needs 16 replicas of the fastest type)")
	f.StringVar(&sf.model, "model", q.Model, "with --serving: the profile's model")
	f.IntVar(&sf.tpot, "tpot-ms", q.TPOTms, "with --serving: the profile's TPOT target in ms")
	if c := f.Lookup("cold-start"); c != nil {
		c.Usage += "; with --serving the default is 5m, whole minutes"
	}
	if w := f.Lookup("window"); w != nil {
		w.Usage += "; with --serving the default is 24h, whole minutes"
	}
	if p := f.Lookup("policy"); p != nil {
		p.Usage += "; with --serving: " + strings.Join(serving.PolicyNames(), ", ") + " (default: all)"
	}
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if !sf.on {
			return nil
		}
		for _, name := range []string{"trace", "policy"} {
			_ = cmd.Flags().SetAnnotation(name, cobra.BashCompOneRequiredFlag, []string{"false"})
		}
		return nil
	}
	cmd.Long += "\n\nWith --serving it replays token demand instead (../shared/SERVING.md, docs/serving.md): one tick a\n" +
		"minute, 24 h windows drawn over the overlap of demand and spot capacity, a 5-minute cold start by default;\n" +
		"per policy the cost per million tokens served, its share of od-autoscale's cost, the share of minutes\n" +
		"with enough ready capacity, the unserved tokens, the spot share, launches per hour and GPU-hours by type.\n" +
		"Serving policies: " + strings.Join(serving.PolicyNames(), ", ") + " (--policy omitted: all)."
	cmd.Example += "\n  # the serving benchmark on its default inputs (run from the repository root)\n" +
		"  arbiter replay --serving\n" +
		"  arbiter replay --serving --policy od-autoscale,skyserve --windows 3 --seed 7 -o json\n" +
		"  # a one-hour trace: a shorter window\n" +
		"  arbiter replay --serving --demand ../shared/data/serving/demand/azure-llm-2023/conv_per_minute.csv \\\n" +
		"    --window 50m --windows 1 --cold-start 3m"
}

// runReplayServing checks the flags and runs one replay per demand trace.
func runReplayServing(cmd *cobra.Command, sf *servingFlags, o replay.Options, output string) error {
	if err := checkServingFlags(cmd, sf); err != nil {
		return err
	}
	names, err := serving.ParsePolicies(o.Policies)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	cfg := serving.DefaultConfig()
	if cmd.Flags().Changed("windows") {
		cfg.Windows = o.Windows
	}
	cfg.Seed = o.Seed
	if cmd.Flags().Changed("cold-start") {
		if o.ColdStart < 0 {
			return fmt.Errorf("--cold-start %s: want a duration >= 0", o.ColdStart)
		}
		cfg.ColdStart = int(math.Ceil(o.ColdStart.Minutes())) // ready never early: whole minutes, up
	}
	if cmd.Flags().Changed("window") {
		if cfg.Length = int(o.Window / time.Minute); cfg.Length < 1 {
			return fmt.Errorf("--window %s: want at least 1m (whole minutes; the serving tick is 60 s)", o.Window)
		}
	}
	demands := sf.demands
	if len(demands) == 0 {
		demands = serving.DefaultDemands(sf.data)
	}
	q := serving.DefaultProfileQuery()
	q.Model, q.TPOTms = sf.model, sf.tpot
	var runs []*serving.Run
	for _, d := range demands {
		p := serving.Paths{Data: sf.data, Demand: d, Profile: sf.profile, Capacity: sf.capacity, Query: q, Scale: sf.scale}
		run, err := serving.Replay(cmd.Context(), p, cfg, names)
		if err != nil {
			return err
		}
		runs = append(runs, run)
	}
	return writeServing(cmd.OutOrStdout(), runs, output)
}

// checkServingFlags refuses flags that mean nothing to a serving replay and values out of range.
func checkServingFlags(cmd *cobra.Command, sf *servingFlags) error {
	for _, name := range replicaOnly {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s applies to the replica replay (../shared/REPLAY.md), not to --serving: drop it", name)
		}
	}
	if err := checkNoJobFlags(cmd); err != nil {
		return err
	}
	if cmd.Flags().Changed("demand-scale") && !(sf.scale > 0) || math.IsInf(sf.scale, 0) {
		return fmt.Errorf("--demand-scale %v: want a number > 0 (omit it for the 16-replica peak scale)", sf.scale)
	}
	if sf.tpot <= 0 {
		return fmt.Errorf("--tpot-ms %d: want a whole number of milliseconds > 0, e.g. 50", sf.tpot)
	}
	return nil
}

// checkNoServingFlags refuses --serving's flags on the other replays.
func checkNoServingFlags(cmd *cobra.Command) error {
	for _, name := range servingOwn {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s applies to serving replays: add --serving, or drop it", name)
		}
	}
	return nil
}

// writeServing prints the runs as a table per run, or as JSON/YAML {"runs": [...]}.
func writeServing(w io.Writer, runs []*serving.Run, output string) error {
	if output == "table" {
		for i, r := range runs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := r.WriteTable(w); err != nil {
				return err
			}
		}
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"runs": runs}); err != nil {
		return err
	}
	if output == "yaml" {
		return cli.JSONToYAML(w, b.Bytes())
	}
	_, err := w.Write(b.Bytes())
	return err
}
