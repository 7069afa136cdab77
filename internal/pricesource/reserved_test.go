package pricesource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

const contractsYAML = `contracts:
  - name: coreweave-h100
    provider: coreweave
    region: us-east-04
    instance_type: HGX-H100-8x
    gpu: H100-80GB
    gpu_count: 8
    hourly_usd: 35.0
    start: 2026-01-01T00:00:00Z
    end: 2027-01-01T00:00:00Z
  - name: lambda-a100-expired
    provider: lambda
    region: us-east-1
    gpu: A100-80GB
    gpu_count: 8
    hourly_usd: 10.0
    start: 2025-01-01T00:00:00Z
    end: 2026-01-01T00:00:00Z
`

func TestReservedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contracts.yaml")
	if err := os.WriteFile(path, []byte(contractsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, err := (&ReservedFile{Path: path}).Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Offers) != 1 || cat.Skipped["outside_term"] != 1 {
		t.Fatalf("offers = %+v skipped = %v; want the running contract only", cat.Offers, cat.Skipped)
	}
	o := cat.Offers[0]
	if o.Market != pricing.Reserved || o.PricePerHour != 35 || o.GPUMemoryGB != 80 || o.PricePerGPUHour() != 4.375 {
		t.Errorf("offer = %+v", o)
	}
	// At the end instant the contract is over.
	cat, err = (&ReservedFile{Path: path}).Fetch(context.Background(), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || len(cat.Offers) != 0 {
		t.Errorf("after the term: %d offers, err %v", len(cat.Offers), err)
	}
}

func TestParseContractsErrors(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr []string
	}{
		{name: "unknown field", yaml: strings.Replace(contractsYAML, "gpu_count: 8\n    hourly_usd: 35.0", "gpu_count: 8\n    hourly: 35.0", 1), wantErr: []string{"c.yaml:2", "hourly"}},
		{name: "unknown top-level field", yaml: "contract:\n  - name: x\n", wantErr: []string{"c.yaml", "contract"}},
		{name: "non-canonical gpu", yaml: strings.Replace(contractsYAML, "gpu: H100-80GB", "gpu: H100", 1), wantErr: []string{"c.yaml:6", `field "gpu"`, "canonical"}},
		{name: "negative price", yaml: strings.Replace(contractsYAML, "35.0", "-35.0", 1), wantErr: []string{"c.yaml:8", "hourly_usd"}},
		{name: "end before start", yaml: strings.Replace(contractsYAML, "2027-01-01", "2025-06-01", 1), wantErr: []string{"c.yaml:10", `"end"`}},
		{name: "count not a number", yaml: strings.Replace(contractsYAML, "gpu_count: 8", "gpu_count: eight", 1), wantErr: []string{"c.yaml:2", "eight"}},
		{name: "not yaml", yaml: "contracts: [", wantErr: []string{"c.yaml"}},
		{name: "hex price", yaml: strings.Replace(contractsYAML, "35.0", "0x23", 1), wantErr: []string{"c.yaml:8", "hourly_usd", "not a decimal number"}},
		{name: "infinite price", yaml: strings.Replace(contractsYAML, "35.0", ".inf", 1), wantErr: []string{"c.yaml:8", "not a decimal number"}},
		{name: "nan price", yaml: strings.Replace(contractsYAML, "35.0", ".nan", 1), wantErr: []string{"c.yaml:8", "not a decimal number"}},
		{name: "no contracts", yaml: "contracts: []\n", wantErr: []string{"c.yaml", "no contracts"}},
		{name: "empty file", yaml: "", wantErr: []string{"c.yaml", "no contracts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseContracts([]byte(tt.yaml), "c.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestReservedFileCurrency(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	y := strings.Replace(contractsYAML, "hourly_usd: 35.0", "hourly_usd: 35.0\n    currency: EUR", 1)
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&ReservedFile{Path: path}).Fetch(context.Background(), at)
	wantKind(t, err, KindInvalid)
}

// TestReservedFileLimitsAndOrigins: a contracts file over its cap fails before it is read, and
// each offer remembers the contract's line for errors and warnings.
func TestReservedFileLimitsAndOrigins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contracts.yaml")
	if err := os.WriteFile(path, []byte(contractsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&ReservedFile{Path: path, MaxBytes: 100}).Fetch(context.Background(), at)
	if e := wantKind(t, err, KindTooLarge); !strings.Contains(e.Error(), "is 425 bytes, over the limit of 100 bytes") {
		t.Errorf("error %q does not name the limit", e)
	}
	cat, err := (&ReservedFile{Path: path}).Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	if got := cat.Origin(cat.Offers[0].Key()); got != path+":2" {
		t.Errorf("origin = %q, want %s:2", got, path)
	}
}

func FuzzParseContracts(f *testing.F) {
	f.Add([]byte(contractsYAML))
	f.Add([]byte("contracts: []"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseContracts(data, "fuzz.yaml")
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.HourlyUSD <= 0 || c.GPUCount <= 0 || !c.End.After(c.Start) {
				t.Fatalf("invalid contract accepted: %+v", c)
			}
		}
	})
}
