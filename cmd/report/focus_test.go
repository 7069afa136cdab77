package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/billing"
)

// TestFocusVersionFlag: a --focus-version Bursar does not write is refused before the store is
// opened, with the versions it writes.
func TestFocusVersionFlag(t *testing.T) {
	for _, v := range []string{"1.4", "", "v1.3"} {
		out, err := execute(t, "focus", "--month", "2026-11", "--focus-version", v, "--data-dir", filepath.Join(t.TempDir(), "none"), "--nats", noNATS)
		if err == nil || !strings.Contains(err.Error(), "--focus-version") || !strings.Contains(err.Error(), "1.3 (the default) or 1.2") {
			t.Errorf("--focus-version %q: %v\n%s", v, err, out)
		}
	}
}

// focusEnv, when set, makes TestFocusVersionsCLI run in this process, with a store of its own
// (chDB keeps the first data path a process opens).
const focusEnv = "BURSAR_REPORT_FOCUS_DIR"

// TestFocusVersionsCLI runs report focus as a user would over the e2e store: by default a FOCUS
// 1.3 CSV with its metadata saying 1.3, and with --focus-version 1.2 the 1.2 dataset, each
// conforming to its version (report.CheckFOCUS is tested in internal/report; here the columns
// and metadata the command writes).
func TestFocusVersionsCLI(t *testing.T) {
	dir := os.Getenv(focusEnv)
	if dir == "" {
		dir = t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestFocusVersionsCLI$", "-test.count=1")
		cmd.Env = append(os.Environ(), focusEnv+"="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	seedE2E(t, dir)
	fleetFile := filepath.Join(dir, "bursar.yaml")
	if err := os.WriteFile(fleetFile, []byte(e2eFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--month", "2026-11", "--fleet", fleetFile, "--data-dir", filepath.Join(dir, "data"), "--nats", noNATS}
	tests := []struct {
		args        []string
		version     string
		has, hasNot string
	}{
		{nil, "1.3", "HostProviderName", ""},
		{[]string{"--focus-version", "1.2"}, "1.2", "ProviderName", "HostProviderName"},
	}
	for _, tt := range tests {
		meta := filepath.Join(dir, "meta-"+tt.version+".json")
		stdout, stderr, err := executeSplit(t, append(append([]string{"focus", "--metadata", meta}, tt.args...), common...)...)
		if err != nil {
			t.Fatalf("focus %v: %v\n%s", tt.args, err, stderr)
		}
		recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
		if err != nil || len(recs) != 5 {
			t.Fatalf("focus %v: %d records (%v), want a header and 4 rows:\n%s", tt.args, len(recs), err, stdout)
		}
		if !slices.Contains(recs[0], tt.has) || (tt.hasNot != "" && slices.Contains(recs[0], tt.hasNot)) {
			t.Errorf("focus %v: header %v, want %s and not %q", tt.args, recs[0], tt.has, tt.hasNot)
		}
		data, err := os.ReadFile(meta)
		if err != nil {
			t.Fatal(err)
		}
		var m billing.Metadata
		if err := json.Unmarshal(data, &m); err != nil || len(m.Schemas) != 1 || m.Schemas[0].FocusVersion != tt.version ||
			len(m.Schemas[0].ColumnDefinitions) != len(recs[0]) {
			t.Errorf("focus %v: metadata (%v) %s", tt.args, err, data)
		}
	}
}
