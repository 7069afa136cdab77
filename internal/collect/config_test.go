package collect

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/pricesource"
	"github.com/bursar-dev/bursar/internal/pricing"
)

const goodConfig = `snapshot: "@every 6h"
defaults:
  schedule: "@every 10m"
  jitter: 30s
  retries: 2
sources:
  - kind: azure
    region: eastus
    schedule: "*/15 * * * *"
  - kind: lambda
    api_key_env: TEST_LAMBDA_KEY
    timeout: 20s
  - kind: skypilot
    files: [aws_vms.csv]
`

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(goodConfig), "collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sources) != 3 || cfg.Snapshot != "@every 6h" {
		t.Fatalf("config = %+v", cfg)
	}
	t.Setenv("TEST_LAMBDA_KEY", "k")
	jobs, err := cfg.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 || jobs[0].Schedule != "*/15 * * * *" || jobs[0].Source.Name() != "azure-retail:eastus" {
		t.Fatalf("jobs = %+v", jobs)
	}
	job := jobs[1]
	if job.Schedule != "@every 10m" || job.Jitter != 30*time.Second || job.Timeout != 20*time.Second ||
		job.Retries != 2 || job.StaleAfter != 3 || job.Source.Name() != "lambda" {
		t.Errorf("job = %+v", job)
	}
}

func TestLoadConfigMissingKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(path, []byte(goodConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_LAMBDA_KEY", "")
	_, err = cfg.Jobs(context.Background())
	if err == nil || !strings.Contains(err.Error(), "line 10") || !strings.Contains(err.Error(), "TEST_LAMBDA_KEY") {
		t.Fatalf("err = %v, want the source's line and the variable to set", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "unknown source field", yaml: strings.Replace(goodConfig, "    region: eastus", "    regoin: eastus", 1),
			want: []string{"collector.yaml:8", "regoin"}},
		{name: "unknown top-level field", yaml: "snapshots: x\n", want: []string{"collector.yaml:1", "snapshots"}},
		{name: "every problem of a source at its own line", yaml: strings.Replace(goodConfig, "    region: eastus\n    schedule:",
			"    regoin: eastus\n    schedul:", 1), want: []string{"collector.yaml:8: field regoin", "collector.yaml:9: field schedul"}},
		{name: "unknown kind", yaml: strings.Replace(goodConfig, "kind: lambda", "kind: lambada", 1),
			want: []string{"collector.yaml:10", `field "kind"`, "lambada"}},
		{name: "missing region", yaml: strings.Replace(goodConfig, "    region: eastus\n", "", 1),
			want: []string{"collector.yaml:7", `field "region"`}},
		{name: "bad schedule", yaml: strings.Replace(goodConfig, "*/15 * * * *", "every quarter hour", 1),
			want: []string{"collector.yaml:9", `field "schedule"`}},
		{name: "bad duration", yaml: strings.Replace(goodConfig, "timeout: 20s", "timeout: soon", 1),
			want: []string{"collector.yaml:12", "soon"}},
		{name: "bad snapshot", yaml: strings.Replace(goodConfig, "@every 6h", "daily-ish", 1),
			want: []string{"collector.yaml", `"snapshot"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml), "collector.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestCredentialErrorsNameTheSourceNotTheKey: a missing key names the variable; a present key
// never shows up in an error, even when the provider rejects it.
func TestCredentialErrorsNameTheSourceNotTheKey(t *testing.T) {
	t.Setenv("LAMBDA_API_KEY", "")
	_, err := SourceConfig{Kind: "lambda"}.Build(context.Background())
	if err == nil || !strings.Contains(err.Error(), "LAMBDA_API_KEY") {
		t.Fatalf("err = %v, want it to name LAMBDA_API_KEY", err)
	}
	const key = "lambda-secret-key-xyz"
	t.Setenv("LAMBDA_API_KEY", key)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error": {"code": "global/invalid-api-key", "message": "API key ` + key + ` was invalid"}}`))
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	err = Prices(context.Background(), PricesOptions{Source: "lambda", Endpoint: srv.URL}, t0, &out, &errOut)
	if err == nil || strings.Contains(err.Error(), key) || pricesource.KindOf(err) != pricesource.KindAuth {
		t.Fatalf("err = %v; want an auth error without the key", err)
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	_ = os.WriteFile(keyFile, []byte(key+"\n"), 0o600)
	t.Setenv("LAMBDA_API_KEY", "")
	if _, err := (SourceConfig{Kind: "lambda", APIKeyFile: keyFile}).Build(context.Background()); err != nil {
		t.Errorf("key from file: %v", err)
	}
}

func realCatalog(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "prices", "skypilot-catalog", "aws_vms_gpu_subset.csv")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real catalog not present: %v", err)
	}
	return p
}

// TestPricesFromRealCatalog is what `collector prices --file .../aws_vms_gpu_subset.csv`
// prints: real offers with canonical GPU names, in each format.
func TestPricesFromRealCatalog(t *testing.T) {
	path := realCatalog(t)
	tests := []struct {
		name   string
		output string
		check  func(t *testing.T, out string)
	}{
		{name: "table", output: "table", check: func(t *testing.T, out string) {
			for _, want := range []string{"PROVIDER", "p5.48xlarge", "H100-80GB", "p4de.24xlarge", "A100-80GB", "p4d.24xlarge", "A100-40GB", "g4dn.xlarge", "T4"} {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q", want)
				}
			}
		}},
		{name: "json", output: "json", check: func(t *testing.T, out string) {
			var rows []struct {
				pricing.Offer
				PricePerHour float64 `json:"usd_per_hour"`
				PerGPU       float64 `json:"usd_per_gpu_hour"`
			}
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if _, ok := pricing.Canonical(r.GPU); !ok || r.PricePerHour <= 0 || r.PerGPU*float64(r.GPUCount)-r.PricePerHour > 1e-9 {
					t.Fatalf("row %+v", r)
				}
			}
			if len(rows) != 562 {
				t.Errorf("rows = %d, want 562", len(rows))
			}
		}},
		{name: "csv", output: "csv", check: func(t *testing.T, out string) {
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 563 || recs[0][4] != "gpu" {
				t.Errorf("csv has %d records, header %v", len(recs), recs[0])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Prices(context.Background(), PricesOptions{Files: []string{path}, Output: tt.output}, t0, &out, &errOut)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, out.String())
			if strings.Contains(errOut.String(), "UNMAPPED") {
				t.Errorf("summary reports unmapped GPUs: %s", errOut.String())
			}
		})
	}
}

func TestPricesErrors(t *testing.T) {
	tests := []struct {
		name string
		opts PricesOptions
		want string
	}{
		{name: "no source", opts: PricesOptions{}, want: "--source"},
		{name: "unknown source", opts: PricesOptions{Source: "oracle"}, want: "unknown kind"},
		{name: "azure without region", opts: PricesOptions{Source: "azure"}, want: "--region"},
		{name: "bad output", opts: PricesOptions{Files: []string{"x.csv"}, Output: "xml"}, want: "--output"},
		{name: "missing file", opts: PricesOptions{Files: []string{"no-such.csv"}}, want: "no-such.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Prices(context.Background(), tt.opts, t0, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(goodConfig))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data, "fuzz.yaml")
		if err != nil {
			return
		}
		for _, sc := range cfg.Sources {
			if _, err := sc.check(); err != nil {
				t.Fatalf("accepted a source that fails its own check: %+v", sc)
			}
		}
	})
}
