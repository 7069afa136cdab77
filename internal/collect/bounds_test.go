package collect

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/pricesource"
	"github.com/bursar-dev/bursar/internal/pricing"
)

const boundsHeader = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region,AvailabilityZone\n"

// writeCatalog writes a SkyPilot CSV of one real row and one priced row, and returns its path.
func writeCatalog(t *testing.T, priced string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aws_vms.csv")
	body := boundsHeader + "p5.48xlarge,H100,8,98.32,30.1,us-east-1,use1-az1\n" + priced + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPriceBoundsApplyToEverySource: prices of 1e-300 and 1e+300 per hour used to be offers;
// outside the bounds per GPU-hour the run fails with the row, the bound and the setting that
// widens it, and a config that widens the bounds lets the price through.
func TestPriceBoundsApplyToEverySource(t *testing.T) {
	tests := []struct {
		name    string
		row     string
		config  string // price_bounds lines under defaults (indented 4) or a source (6)
		wantErr []string
	}{
		{name: "real prices pass", row: "g5.xlarge,A10G,1,1.006,,us-east-1,use1-az1"},
		{name: "tiny price", row: "g5.xlarge,A10G,1,1e-300,,us-east-1,use1-az1",
			wantErr: []string{"aws_vms.csv:3:", "g5.xlarge", "below the minimum 0.01", "price_bounds.min_per_gpu_hour"}},
		{name: "huge price", row: "g5.xlarge,A10G,1,1e+300,,us-east-1,use1-az1",
			wantErr: []string{"aws_vms.csv:3:", "above the maximum 100", "price_bounds.max_per_gpu_hour"}},
		{name: "widened in defaults", row: "g5.xlarge,A10G,1,250,,us-east-1,use1-az1",
			config: "defaults:\n  price_bounds: {max_per_gpu_hour: 1000}\n"},
		{name: "widened for the source", row: "g5.xlarge,A10G,1,0.001,,us-east-1,use1-az1",
			config: "SOURCE    price_bounds: {min_per_gpu_hour: 0.0001}\n"},
		{name: "one side widened keeps the other", row: "g5.xlarge,A10G,1,0.001,,us-east-1,use1-az1",
			config: "defaults:\n  price_bounds: {max_per_gpu_hour: 1000}\n", wantErr: []string{"below the minimum 0.01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCatalog(t, tt.row)
			doc := "sources:\n  - kind: skypilot\n    files: [" + path + "]\n"
			if src, ok := strings.CutPrefix(tt.config, "SOURCE"); ok {
				doc += src
			} else {
				doc = tt.config + doc
			}
			cfg, err := ParseConfig([]byte(doc), "collector.yaml")
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := cfg.Jobs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			cat, err := jobs[0].Source.Fetch(context.Background(), t0)
			if len(tt.wantErr) == 0 {
				if err != nil || len(cat.Offers) != 3 {
					t.Fatalf("fetch = %d offers, %v; want 3 and no error", len(cat.Offers), err)
				}
				return
			}
			if !errors.Is(err, pricing.ErrImplausiblePrice) || pricesource.KindOf(err) != pricesource.KindInvalid {
				t.Fatalf("err = %v, want an invalid-kind implausible price", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestPriceBoundsApplyToHTTPSources: the bounds are not a file parser's: an API answering a
// price in cents where dollars belong fails the same way, naming the offer.
func TestPriceBoundsApplyToHTTPSources(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	body, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data",
		"provider-formats", "fixtures", "lambda-instance-types.json"))
	if err != nil {
		t.Skipf("fixture not present: %v", err)
	}
	// 2,392 cents is 23.92 USD for 8 H100s; written in hundredths of a cent it is 299 USD per GPU-hour.
	body = bytes.Replace(body, []byte(`"price_cents_per_hour": 2392`), []byte(`"price_cents_per_hour": 239200`), 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	t.Cleanup(srv.Close)
	t.Setenv("LAMBDA_API_KEY", "test-key")
	var out, errOut bytes.Buffer
	err = Prices(context.Background(), PricesOptions{Source: "lambda", Endpoint: srv.URL}, t0, &out, &errOut)
	if !errors.Is(err, pricing.ErrImplausiblePrice) || !strings.Contains(err.Error(), "lambda|") ||
		!strings.Contains(err.Error(), "gpu_8x_h100") {
		t.Fatalf("err = %v, want an implausible price naming the lambda offer", err)
	}
}

func TestPriceBoundsConfigErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{name: "min above max", doc: "sources:\n  - kind: vast\n    price_bounds: {min_per_gpu_hour: 5, max_per_gpu_hour: 1}\n",
			want: `collector.yaml:3: source 1, field "price_bounds.max_per_gpu_hour"`},
		{name: "negative default", doc: "defaults:\n  price_bounds: {min_per_gpu_hour: -1}\nsources:\n  - kind: vast\n",
			want: `field "defaults.price_bounds.min_per_gpu_hour"`},
		{name: "unknown bound", doc: "sources:\n  - kind: vast\n    price_bounds: {max: 5}\n", want: "max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.doc), "collector.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}
