package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
)

// focusExport is report focus (FOCUS 1.2, as the store's owner answers) for November over
// history plus a reserved replica of batch at gcp-usc1 (2 GPUs x 3 h at 6.00), a spot replica of
// embed beside chat's at aws-use1 (one 2-GPU replica x 3 h at 4.00: 12.00 of the 39.00 that
// capacity cost that day) and one of embed at vast-us, a marketplace (1 GPU x 3 h at 0.50); the
// fleet names account ids and chat's team.
func focusExport(t *testing.T) (*store.Store, *Result) {
	st := history(t)
	seedReplicas(t, st,
		replicaSample{"09:00", "batch", "gcp-usc1", "gcp", "reserved", "gcp-usc1/us-central1-a/a2-highgpu-2g/reserved", "A100-80GB", 2, 1, 6},
		replicaSample{"12:00", "batch", "gcp-usc1", "gcp", "reserved", "gcp-usc1/us-central1-a/a2-highgpu-2g/reserved", "A100-80GB", 2, 0, 6},
		replicaSample{"09:00", "embed", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 2, 1, 4},
		replicaSample{"12:00", "embed", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 2, 0, 4},
		replicaSample{"09:00", "embed", "vast-us", "vast", "on_demand", "vast-us/-/4090x1/on_demand", "RTX4090", 1, 1, 0.5},
		replicaSample{"12:00", "embed", "vast-us", "vast", "on_demand", "vast-us/-/4090x1/on_demand", "RTX4090", 1, 0, 0.5},
	)
	fl := testFleet()
	fl.Locations = append(fl.Locations, fleet.Location{Name: "vast-us", Provider: "vast", Region: "US", AccountIDs: []string{"vast-team-7"}})
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

// mandatoryByVersion are each version's mandatory columns as the specification lists them,
// written here apart from the column table the export and CheckFOCUS use, so a column dropped
// from that table fails the test.
var mandatoryByVersion = map[string][]string{
	"1.2": {"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd",
		"BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart",
		"ContractedCost", "EffectiveCost", "InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit", "ProviderName",
		"PublisherName", "ServiceCategory", "ServiceName"},
	// 1.3: 1.2's (ProviderName and PublisherName deprecated, still mandatory) and the two entity columns.
	"1.3": {"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd",
		"BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart",
		"ContractedCost", "EffectiveCost", "HostProviderName", "InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit",
		"ProviderName", "PublisherName", "ServiceCategory", "ServiceName", "ServiceProviderName"},
}

// TestFOCUSConformance checks the export in each version against that version's column table:
// every mandatory column (the list above), no column that is neither FOCUS nor x_, every cell's
// type, nullability and allowed values, the rules between a row's columns and between rows
// (CheckFOCUS), as CSV and as Parquet, the Parquet file's cells equal to the CSV file's. Both
// versions' files also import (billing.Parse, the 1.2 importer: 1.3 keeps every 1.2 column). On
// main before this, BillingAccountId was the provider's name, a reserved row had no commitment
// columns, SkuPriceId and AvailabilityZone were missing, Tags had no team, nothing wrote Parquet,
// and there was no 1.3.
func TestFOCUSConformance(t *testing.T) {
	_, base := focusExport(t)
	tests := []struct {
		version  string
		wantCols []string // columns beyond the mandatory ones the export must hold
	}{
		{"1.2", []string{"SkuPriceId", "AvailabilityZone", "CommitmentDiscountId", "CommitmentDiscountStatus", "x_PromptTokens"}},
		{"1.3", []string{"SkuPriceId", "AvailabilityZone", "CommitmentDiscountId", "ContractApplied", "AllocatedMethodId",
			"AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags", "x_PromptTokens",
			"x_GenerationTokens", "x_Requests"}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			res, err := FOCUSAs(tt.version, base)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range append(slices.Clone(mandatoryByVersion[tt.version]), tt.wantCols...) {
				if !slices.Contains(res.Columns, c) {
					t.Errorf("column %s is missing", c)
				}
			}
			if !strings.HasPrefix(res.Title, "FOCUS "+tt.version+" ") {
				t.Errorf("title %q does not name FOCUS %s", res.Title, tt.version)
			}
			var csvOut, pq bytes.Buffer
			if err := Write(&csvOut, "csv", res, ""); err != nil {
				t.Fatal(err)
			}
			if err := Write(&pq, "parquet", res, ""); err != nil {
				t.Fatal(err)
			}
			csvHeader, fromCSV := csvCells(t, csvOut.Bytes())
			pqHeader, fromParquet := parquetCells(t, pq.Bytes())
			if err := CheckFOCUS(tt.version, "focus.csv", csvHeader, fromCSV); err != nil {
				t.Errorf("the CSV export does not conform: %v", err)
			}
			if err := CheckFOCUS(tt.version, "focus.parquet", pqHeader, fromParquet); err != nil {
				t.Errorf("the Parquet export does not conform: %v", err)
			}
			if len(fromCSV) != 5 || len(fromParquet) != 5 {
				t.Fatalf("%d CSV and %d Parquet rows, want 5 (chat and embed on aws spot, chat on gcp on-demand, batch reserved, embed on vast)",
					len(fromCSV), len(fromParquet))
			}
			for i := range fromCSV {
				if !maps.Equal(fromCSV[i], fromParquet[i]) {
					t.Errorf("row %d:\nParquet %v\nCSV     %v", i+1, fromParquet[i], fromCSV[i])
				}
			}
			for name, data := range map[string][]byte{"focus.csv": csvOut.Bytes(), "focus.parquet": pq.Bytes()} {
				if ex, err := billing.Parse(name, data); err != nil || len(ex.Charges) != 5 {
					t.Errorf("billing.Parse(%s): %v", name, err)
				}
			}
		})
	}
}

// TestFOCUSMetadata: 1.2's columns and metadata are those FOCUS and billing.NewMetadata give;
// 1.3's metadata names 1.3, types its new columns from the specification and marks only x_
// columns as Bursar's.
func TestFOCUSMetadata(t *testing.T) {
	created := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	extra := map[string]billing.Type{"x_PromptTokens": billing.Decimal}
	cols12, _ := FOCUSColumnsOf("1.2")
	if !slices.Equal(cols12, FOCUSColumns()) {
		t.Errorf("1.2's columns %v, want FOCUS's own %v", cols12, FOCUSColumns())
	}
	got, err := FOCUSMetadata("1.2", "Bursar", cols12, extra, created)
	if want := billing.NewMetadata("Bursar", cols12, extra, created); err != nil || !jsonEqual(got, want) {
		t.Errorf("1.2 metadata (%v) differs from billing.NewMetadata's", err)
	}
	cols13, _ := FOCUSColumnsOf("1.3")
	m, err := FOCUSMetadata("1.3", "Bursar", cols13, extra, created)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Schemas[0]
	if s.FocusVersion != "1.3" || s.SchemaID == got.Schemas[0].SchemaID {
		t.Errorf("1.3 schema %s, version %s", s.SchemaID, s.FocusVersion)
	}
	types := map[string]billing.ColumnDefinition{}
	for _, d := range s.ColumnDefinitions {
		types[d.ColumnName] = d
	}
	for col, want := range map[string]string{"ContractApplied": "JSON", "AllocatedMethodDetails": "JSON", "AllocatedTags": "JSON",
		"HostProviderName": "String", "ServiceProviderName": "String", "BilledCost": "Decimal", "x_PromptTokens": "Decimal"} {
		d := types[col]
		if d.DataType != want || (d.ProviderName != "") != strings.HasPrefix(col, "x_") {
			t.Errorf("%s: %+v, want type %s, provider set only on x_ columns", col, d, want)
		}
	}
	if _, err := FOCUSMetadata("1.4", "Bursar", cols13, extra, created); err == nil {
		t.Error("metadata for FOCUS 1.4: no error")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// csvCells reads a CSV export back: its header and each row's cells by column.
func csvCells(t *testing.T, data []byte) ([]string, []billing.Record) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("not CSV (%v)", err)
	}
	var out []billing.Record
	for _, r := range recs[1:] {
		m := billing.Record{}
		for j, c := range recs[0] {
			m[c] = r[j]
		}
		out = append(out, m)
	}
	return recs[0], out
}

// parquetCells reads a Parquet export back, each cell as the CSV export writes it (decimals in
// full, times in RFC 3339, null as ""), so the two files are checked alike and compared.
func parquetCells(t *testing.T, data []byte) ([]string, []billing.Record) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	paths := f.Schema().Columns()
	header := make([]string, len(paths))
	types := make([]parquet.Type, len(paths))
	for i, p := range paths {
		leaf, _ := f.Schema().Lookup(p...)
		header[i], types[i] = p[0], leaf.Node.Type()
	}
	r := parquet.NewReader(bytes.NewReader(data))
	defer r.Close()
	var out []billing.Record
	buf := make([]parquet.Row, 16)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			rec := billing.Record{}
			for _, v := range row {
				rec[header[v.Column()]] = parquetText(t, types[v.Column()], v)
			}
			out = append(out, rec)
		}
		if errors.Is(err, io.EOF) {
			return header, out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func parquetText(t *testing.T, typ parquet.Type, v parquet.Value) string {
	if v.IsNull() {
		return ""
	}
	if lt := typ.LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok && ts.IsAdjustedToUTC {
			return time.UnixMilli(v.Int64()).UTC().Format(time.RFC3339)
		}
	}
	switch v.Kind() {
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'f', -1, 64)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.ByteArray:
		return string(v.ByteArray())
	}
	t.Fatalf("Parquet value of kind %s", v.Kind())
	return ""
}

// focusRows is the export in version as CSV, its rows by x_Workload/x_Location/x_Market.
func focusRows(t *testing.T, res *Result) map[string]billing.Record {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, "csv", res, ""); err != nil {
		t.Fatal(err)
	}
	_, recs := csvCells(t, b.Bytes())
	rows := map[string]billing.Record{}
	for _, r := range recs {
		rows[r["x_Workload"]+"/"+r["x_Location"]+"/"+r["x_Market"]] = r
	}
	return rows
}

// TestFOCUSRows checks the values the spec asks for on each kind of row, in each version.
func TestFOCUSRows(t *testing.T) {
	_, base := focusExport(t)
	// batch's reserved 2 GPUs x 3 h at 6.00 an hour: 18.00, 6 GPU-hours. chat's and embed's spot
	// capacity at aws-use1 cost 27.00 (12 GPU-hours) and 12.00 (6) of 39.00: 27/39 = 0.692308.
	tests := []struct {
		version, row string
		want         map[string]string
	}{
		{"1.2", "chat/aws-use1/spot", map[string]string{"BillingAccountId": "444455556666", "AvailabilityZone": "us-east-1a",
			"SkuPriceId": "aws-use1/H100-80GB/spot", "PricingCategory": "Dynamic", "CommitmentDiscountId": "", "ProviderName": "aws",
			"ResourceId": "chat@aws-use1/spot/H100-80GB"}},
		{"1.2", "batch/gcp-usc1/reserved", map[string]string{"BillingAccountId": "bursar-prod", "BilledCost": "18", "PricingCategory": "Committed",
			"CommitmentDiscountId": "gcp-usc1/A100-80GB/reserved", "CommitmentDiscountStatus": "Used",
			"CommitmentDiscountCategory": "Usage", "CommitmentDiscountQuantity": "6", "CommitmentDiscountUnit": "GPU-Hours"}},
		{"1.3", "chat/aws-use1/spot", map[string]string{"ServiceProviderName": "aws", "HostProviderName": "aws", "ProviderName": "aws",
			"InvoiceIssuerName": "aws", "BilledCost": "27", "ResourceId": "aws-use1/spot/H100-80GB", "ResourceType": "GPU capacity",
			"AllocatedMethodId": AllocationMethod, "AllocatedResourceId": "chat@aws-use1/spot/H100-80GB", "AllocatedResourceName": "chat at aws-use1",
			"ContractApplied": "", "AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":0.692308,"UsageUnit":"GPU-Hours","UsageQuantity":12}]}`,
			"PricingCategory": "Dynamic", "Tags": `{"location":"aws-use1","market":"spot"}`, "AllocatedTags": `{"team":"assistants","workload":"chat"}`}},
		{"1.3", "embed/aws-use1/spot", map[string]string{"BilledCost": "12", "ResourceId": "aws-use1/spot/H100-80GB",
			"AllocatedResourceId": "embed@aws-use1/spot/H100-80GB", "AllocatedTags": `{"workload":"embed"}`,
			"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":0.307692,"UsageUnit":"GPU-Hours","UsageQuantity":6}]}`}},
		{"1.3", "chat/gcp-usc1/on_demand", map[string]string{"ServiceProviderName": "gcp", "HostProviderName": "gcp",
			"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":1,"UsageUnit":"GPU-Hours","UsageQuantity":3}]}`}},
		{"1.3", "embed/vast-us/on_demand", map[string]string{"ServiceProviderName": "vast", "HostProviderName": "vast host",
			"InvoiceIssuerName": "vast", "BillingAccountId": "vast-team-7", "BilledCost": "1.5"}},
		{"1.3", "batch/gcp-usc1/reserved", map[string]string{"PricingCategory": "Committed", "CommitmentDiscountId": "gcp-usc1/A100-80GB/reserved",
			"ContractApplied": `{"Elements":[{"ContractID":"gcp-usc1/A100-80GB/reserved","ContractCommitmentID":"gcp-usc1/A100-80GB/reserved",` +
				`"ContractCommitmentAppliedCost":18,"ContractCommitmentAppliedQuantity":6,"ContractCommitmentAppliedUnit":"GPU-Hours"}]}`}},
	}
	byVersion := map[string]map[string]billing.Record{}
	for _, v := range FOCUSVersions {
		res, err := FOCUSAs(v, base)
		if err != nil {
			t.Fatal(err)
		}
		byVersion[v] = focusRows(t, res)
	}
	for _, tt := range tests {
		r, ok := byVersion[tt.version][tt.row]
		if !ok {
			t.Fatalf("FOCUS %s: no %s row", tt.version, tt.row)
		}
		for k, v := range tt.want {
			if r[k] != v {
				t.Errorf("FOCUS %s %s: %s = %q, want %q", tt.version, tt.row, k, r[k], v)
			}
		}
	}
	var tags map[string]string
	if err := json.Unmarshal([]byte(byVersion["1.2"]["chat/aws-use1/spot"]["Tags"]), &tags); err != nil || tags["team"] != "assistants" {
		t.Errorf("chat's 1.2 Tags %q lack team assistants (%v)", byVersion["1.2"]["chat/aws-use1/spot"]["Tags"], err)
	}
	if _, ok := byVersion["1.2"]["chat/aws-use1/spot"]["ServiceProviderName"]; ok {
		t.Error("the 1.2 export has 1.3's ServiceProviderName")
	}
	if len(base.Notes) != 0 {
		t.Errorf("notes %v with every location's account configured", base.Notes)
	}
}
