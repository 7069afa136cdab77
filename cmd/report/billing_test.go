package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportBillingChecksBeforeOpening: a malformed export is refused with its file, row and
// column before the store is opened, so nothing is imported and no store is made.
func TestImportBillingChecksBeforeOpening(t *testing.T) {
	tmp := t.TempDir()
	good, err := os.ReadFile("../../internal/billing/testdata/azure-focus-2026-11.csv")
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(tmp, "azure.csv")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(good), "352.8,", "three hundred,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(tmp, "bursar-data")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"wrong type", []string{"import-billing", "--focus", bad}, bad + `: row 1, column BilledCost: "three hundred" is not a decimal number`},
		{"no file", []string{"import-billing", "--focus", filepath.Join(tmp, "none.csv")}, "none.csv: no such file"},
		{"no --focus", []string{"import-billing"}, `required flag(s) "focus" not set`},
		{"unknown basis", []string{"cost", "--basis", "invoice", "--fleet", ""}, `--basis "invoice": want estimated or billed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := execute(t, append(tt.args, "--data-dir", dataDir, "--nats", noNATS)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("report %v = %v, want an error containing %q\n%s", tt.args, err, tt.want, out)
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("report %v made %s", tt.args, dataDir)
			}
		})
	}
}

func TestBillingHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"import-billing", "--help"}, []string{"--focus", "Parquet", "nothing is imported", "replaces the older one"}},
		{[]string{"reconcile", "--help"}, []string{"estimated_usd", "effective_cost", "(unmatched)", "account_ids"}},
		{[]string{"tokens", "--help"}, []string{"--basis", "billed"}},
		{[]string{"savings", "--help"}, []string{"--basis"}},
		{[]string{"cost", "--help"}, []string{"--basis"}},
	} {
		out, err := execute(t, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("report %v lacks %q", tt.args, w)
			}
		}
	}
}
