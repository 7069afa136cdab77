package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli"
)

// TestHelpTeachesEveryReport checks that each report's --help names its output formats, and that
// reclaims and availability explain their columns and flags.
func TestHelpTeachesEveryReport(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"cost", []string{"--output", "table, json, yaml, csv or markdown", "--by"}},
		{"tokens", []string{"table, json, yaml, csv or markdown"}},
		{"savings", []string{"table, json, yaml, csv or markdown"}},
		{"idle", []string{"table, json, yaml, csv or markdown"}},
		{"commitments", []string{"table, json, yaml, csv or markdown"}},
		{"budget", []string{"table, json, yaml, csv or markdown"}},
		{"reclaims", []string{"table, json, yaml, csv or markdown", "avg_to_first_gpu_s", "replaced_by_deadline", "--by gpu",
			"zone", "unknown"}},
		{"availability", []string{"table, json, yaml, csv or markdown", "--target", "available_pct", "downtime_min", "outages",
			"replicas.min", "--target capacity", "available_pct_of_capacity", "unserved_pct", "target_met"}},
		{"jobs", []string{"table, json, yaml, csv or markdown", "--job", "--team", "deadline_met", "on_demand_usd", "lost_h"}},
		{"forecast", []string{"table, json, yaml, csv or markdown", "80 %", "backtested error", "burn-rate", "--history"}},
		{"anomalies", []string{"table, json, yaml, csv or markdown", "detect_min", "impact_usd", "moved", "answer",
			"#usd-per-gpu-hour", "--period"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g cli.Globals
			root := newRoot(&g)
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs([]string{tt.name, "--help"})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report %s --help lacks %q:\n%s", tt.name, w, out.String())
				}
			}
		})
	}
}
