package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/store"
)

// focusExport is report focus for November over history plus a reserved replica of batch at
// gcp-usc1 (2 GPUs x 3 h at 6.00), the fleet naming account ids and chat's team.
func focusExport(t *testing.T) (*store.Store, *Result) {
	st := history(t)
	seedReplicas(t, st,
		replicaSample{"09:00", "batch", "gcp-usc1", "gcp", "reserved", "gcp-usc1/us-central1-a/a2-highgpu-2g/reserved", "A100-80GB", 2, 1, 6},
		replicaSample{"12:00", "batch", "gcp-usc1", "gcp", "reserved", "gcp-usc1/us-central1-a/a2-highgpu-2g/reserved", "A100-80GB", 2, 0, 6},
	)
	fl := testFleet()
	fl.Locations[0].AccountIDs = []string{"444455556666"}
	fl.Locations[2].AccountIDs = []string{"bursar-prod"}
	fl.Workloads[0].Team = "assistants"
	month, err := ParseMonth("2026-11")
	if err != nil {
		t.Fatal(err)
	}
	res, err := FOCUS(ctxT(t), st, Options{Window: month, Now: at("12:30"), Fleet: fl})
	if err != nil {
		t.Fatal(err)
	}
	return st, res
}

// TestFOCUSConformance checks the export against the FOCUS column table (internal/billing,
// written from the specification): every mandatory column, no column that is neither FOCUS nor
// x_, every cell's type and allowed values and the rules between columns (billing.Check, the
// parser of imports), as CSV and as Parquet. On main before this, BillingAccountId was the
// provider's name, a reserved row had no commitment columns, SkuPriceId and AvailabilityZone were
// missing, Tags had no team and nothing wrote Parquet.
func TestFOCUSConformance(t *testing.T) {
	_, res := focusExport(t)
	for _, c := range billing.Columns {
		if c.Level == billing.Mandatory && !slices.Contains(res.Columns, c.Name) {
			t.Errorf("mandatory column %s is missing", c.Name)
		}
	}
	for _, c := range res.Columns {
		if _, ok := billing.Lookup(c); !ok && !strings.HasPrefix(c, "x_") {
			t.Errorf("column %s is neither FOCUS %s nor x_", c, billing.Version)
		}
	}
	for _, want := range []string{"SkuPriceId", "AvailabilityZone", "CommitmentDiscountId", "CommitmentDiscountStatus"} {
		if !slices.Contains(res.Columns, want) {
			t.Errorf("column %s is missing", want)
		}
	}
	var csvOut, pq bytes.Buffer
	if err := Write(&csvOut, "csv", res, ""); err != nil {
		t.Fatal(err)
	}
	if err := Write(&pq, "parquet", res, ""); err != nil {
		t.Fatal(err)
	}
	fromCSV, err := billing.Parse("focus.csv", csvOut.Bytes())
	if err != nil {
		t.Fatalf("the CSV export does not conform: %v", err)
	}
	fromParquet, err := billing.Parse("focus.parquet", pq.Bytes())
	if err != nil {
		t.Fatalf("the Parquet export does not conform: %v", err)
	}
	if len(fromCSV.Charges) != 3 || len(fromParquet.Charges) != 3 {
		t.Fatalf("%d CSV and %d Parquet charges, want 3 (aws spot, gcp on-demand, gcp reserved)", len(fromCSV.Charges), len(fromParquet.Charges))
	}
	for i, c := range fromParquet.Charges {
		if c.Billed != fromCSV.Charges[i].Billed || !c.Start.Equal(fromCSV.Charges[i].Start) {
			t.Errorf("charge %d: Parquet %+v, CSV %+v", i, c, fromCSV.Charges[i])
		}
	}
}

// TestFOCUSRows checks the values the spec asks for on each kind of row.
func TestFOCUSRows(t *testing.T) {
	_, res := focusExport(t)
	var b bytes.Buffer
	if err := Write(&b, "csv", res, ""); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string]string{}
	for _, r := range recs[1:] {
		m := map[string]string{}
		for j, c := range recs[0] {
			m[c] = r[j]
		}
		rows[m["x_Workload"]+"/"+m["x_Market"]] = m
	}
	// batch's reserved 2 GPUs x 3 h at 6.00 an hour: 18.00, 6 GPU-hours.
	tests := []struct {
		row  string
		want map[string]string
	}{
		{"chat/spot", map[string]string{"BillingAccountId": "444455556666", "AvailabilityZone": "us-east-1a",
			"SkuPriceId": "aws-use1/H100-80GB/spot", "PricingCategory": "Dynamic", "CommitmentDiscountId": ""}},
		{"batch/reserved", map[string]string{"BillingAccountId": "bursar-prod", "BilledCost": "18", "PricingCategory": "Committed",
			"CommitmentDiscountId": "gcp-usc1/A100-80GB/reserved", "CommitmentDiscountStatus": "Used",
			"CommitmentDiscountCategory": "Usage", "CommitmentDiscountQuantity": "6", "CommitmentDiscountUnit": "GPU-Hours"}},
	}
	for _, tt := range tests {
		r, ok := rows[tt.row]
		if !ok {
			t.Fatalf("no %s row in %v", tt.row, rows)
		}
		for k, v := range tt.want {
			if r[k] != v {
				t.Errorf("%s: %s = %q, want %q", tt.row, k, r[k], v)
			}
		}
	}
	var tags map[string]string
	if err := json.Unmarshal([]byte(rows["chat/spot"]["Tags"]), &tags); err != nil || tags["team"] != "assistants" {
		t.Errorf("chat's Tags %q lack team assistants (%v)", rows["chat/spot"]["Tags"], err)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes %v with every location's account configured", res.Notes)
	}
}
