package collect

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// TestOfferFieldsHaveOneNameInEveryFormat: `collector prices` once named the price
// price_per_hour in JSON and usd_per_hour in CSV. Every format names every field alike, and as
// the price.observed event does.
func TestOfferFieldsHaveOneNameInEveryFormat(t *testing.T) {
	offer := pricing.Offer{Provider: "aws", Region: "us-east-1", Zone: "us-east-1a", InstanceType: "p3.8xlarge",
		GPU: "V100-16GB", GPUCount: 4, GPUMemoryGB: 16, Market: pricing.Spot, PricePerHour: 3.6721,
		Source: "skypilot", ObservedAt: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	keys := map[string][]string{}
	for _, format := range []string{"json", "yaml", "csv"} {
		var b bytes.Buffer
		if err := WriteOffers(&b, format, []pricing.Offer{offer}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var rows []map[string]any
		switch format {
		case "json":
			if err := json.Unmarshal(b.Bytes(), &rows); err != nil {
				t.Fatalf("json: %v\n%s", err, b.String())
			}
		case "yaml":
			if err := yaml.Unmarshal(b.Bytes(), &rows); err != nil {
				t.Fatalf("yaml: %v\n%s", err, b.String())
			}
		case "csv":
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil || len(recs) != 2 {
				t.Fatalf("csv: %v, %d records", err, len(recs))
			}
			rows = []map[string]any{{}}
			for i, c := range recs[0] {
				rows[0][c] = recs[1][i]
			}
		}
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows, want 1", format, len(rows))
		}
		for k := range rows[0] {
			keys[format] = append(keys[format], k)
		}
		slices.Sort(keys[format])
		if !slices.Contains(keys[format], "usd_per_hour") || !slices.Contains(keys[format], "usd_per_gpu_hour") {
			t.Errorf("%s names no usd_per_hour and usd_per_gpu_hour: %v", format, keys[format])
		}
	}
	if !slices.Equal(keys["json"], keys["csv"]) || !slices.Equal(keys["yaml"], keys["csv"]) {
		t.Errorf("field names differ:\njson %v\nyaml %v\ncsv  %v", keys["json"], keys["yaml"], keys["csv"])
	}
}
