package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/bus"
)

// TestOnlyThisCloudsWatcherStarts: "collector run" with the example config started the AWS, GCP
// and Azure metadata watchers at once, on any machine, and logged them by Go type name
// ("AWSIMDSWatcher"). It starts only the watcher of the cloud the machine's DMI identity names,
// none (with a warning) where it names none of them, and logs plain names.
func TestOnlyThisCloudsWatcherStarts(t *testing.T) {
	tests := []struct {
		name, vendor string
		want         []string
		wantLog      string
	}{
		{"on gcp", "Google\n", []string{"gcp preemption notices (instance metadata)"}, "of this machine's cloud only"},
		{"on aws", "Amazon EC2\n", []string{"aws spot notices (instance metadata)"}, "of this machine's cloud only"},
		{"on azure", "Microsoft Corporation\n", []string{"azure scheduled events"}, "of this machine's cloud only"},
		{"on a laptop", "LENOVO\n", nil, "none started; keep only the watcher of the node's cloud"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig(filepath.Join("..", "..", "examples", "collector.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Prices, cfg.GPU, cfg.Scrape, cfg.Watchers.AWSEvents = nil, nil, nil, nil // the watchers alone
			dmi := t.TempDir()
			if err := os.WriteFile(filepath.Join(dmi, "sys_vendor"), []byte(tt.vendor), 0o600); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			parts, err := cfg.parts(context.Background(), bus.NewPublisher(nil), slog.New(slog.NewTextHandler(&logs, nil)),
				prometheus.NewRegistry(), runDeps{dmiDir: dmi})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range parts {
				names = append(names, p.name)
			}
			if !slices.Equal(names, tt.want) || !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("parts %q, want %q; log:\n%s", names, tt.want, logs.String())
			}
		})
	}
}
