package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/gpu"
)

// newConfigCmd is `collector config check FILE`: validate collector.yaml without running anything,
// as "arbiter config check" does for the fleet file.
func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Work with the collector config (collector.yaml)",
		Example: "  collector config check collector.yaml"}
	cmd.AddCommand(&cobra.Command{
		Use:     "check FILE",
		Short:   "Validate a collector config: strict fields, required values, schedules, URLs and credentials' sources",
		Example: "  collector config check examples/collector.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := LoadConfig(args[0])
			if err != nil {
				return err
			}
			return describe(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], cfg)
		},
	})
	return cmd
}

// describe prints what a valid config runs, and warns about what this build cannot run.
func describe(out, warn io.Writer, name string, cfg Config) error {
	var parts []string
	if cfg.Prices != nil && len(cfg.Prices.Sources) > 0 {
		parts = append(parts, fmt.Sprintf("%d price sources", len(cfg.Prices.Sources)))
	}
	if w := watchers(cfg); w > 0 {
		parts = append(parts, fmt.Sprintf("%d reclaim watchers", w))
	}
	if cfg.GPU != nil {
		parts = append(parts, "gpu telemetry")
		if !gpu.NVMLBuilt {
			fmt.Fprintf(warn, "%s: warning: gpu: this collector was built without NVML and will publish no GPU samples; %s\n",
				name, gpu.BuildHint)
		}
	}
	if cfg.Scrape != nil && len(cfg.Scrape.Targets) > 0 {
		parts = append(parts, fmt.Sprintf("%d scrape targets", len(cfg.Scrape.Targets)))
	}
	_, err := fmt.Fprintf(out, "%s: ok: %s\n", name, strings.Join(parts, ", "))
	return err
}

// watchers counts the reclaim watchers configured.
func watchers(cfg Config) int {
	n := 0
	w := cfg.Watchers
	for _, on := range []bool{w.AWS != nil, w.AWSEvents != nil, w.GCP != nil, w.Azure != nil} {
		if on {
			n++
		}
	}
	return n
}
