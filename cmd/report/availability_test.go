package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapacityTargetRefusesEarly: --target capacity needs the fleet file and --by workload, and
// says so before it opens any store.
func TestCapacityTargetRefusesEarly(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"by location", []string{"--by", "location"}, "use it with --by workload, not --by location"},
		{"by workload and location", []string{"--by", "workload,location"}, "use it with --by workload"},
		{"no fleet", []string{"--fleet", ""}, "give --fleet"},
		{"a missing fleet file", []string{"--fleet", "nowhere/bursar.yaml"}, "nowhere/bursar.yaml cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			args := append([]string{"availability", "--target", "capacity", "--data-dir", filepath.Join(tmp, "data"), "--nats", noNATS}, tt.args...)
			out, err := execute(t, args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("report %v = %v, want an error containing %q\n%s", args, err, tt.wantErr, out)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
				t.Errorf("report %v created %s", args, entries[0].Name())
			}
		})
	}
}
