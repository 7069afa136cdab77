package billing

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// fixtures are the hand-written exports under testdata, one per provider's style.
var fixtures = []string{"testdata/aws-focus-2026-11.csv", "testdata/azure-focus-2026-11.csv", "testdata/gcp-focus-2026-11.csv"}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseFixtures(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		file         string
		wantCharges  int
		wantProvider string
		wantType     string // the first charge's instance type
		wantTag      [2]string
	}{
		{fixtures[0], 8, "aws", "p5.48xlarge", [2]string{"team", "assistants"}},                       // from x_UsageType
		{fixtures[1], 1, "azure", "Standard_ND96isr_H100_v5", [2]string{"bursar-workload", "chat"}},   // SkuPriceDetails; a BOM
		{fixtures[2], 1, "gcp", "a3-highgpu-8g", [2]string{"goog-k8s-cluster-name", "gke-prod-euw4"}}, // BigQuery's "... UTC" times
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			ex, err := ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(ex.Charges) != tt.wantCharges {
				t.Fatalf("%d charges, want %d", len(ex.Charges), tt.wantCharges)
			}
			c := ex.Charges[0]
			if ProviderKey(c.Provider) != tt.wantProvider || c.InstanceType != tt.wantType || c.Tags[tt.wantTag[0]] != tt.wantTag[1] {
				t.Errorf("provider %q type %q tags %v, want %s %s %v", c.Provider, c.InstanceType, c.Tags, tt.wantProvider, tt.wantType, tt.wantTag)
			}
			if !c.Start.Equal(day) || !c.End.Equal(day.Add(24*time.Hour)) || c.PeriodStart.Month() != time.November {
				t.Errorf("charge period %s to %s, billing period %s", c.Start, c.End, c.PeriodStart)
			}
		})
	}
}

// TestParseKeepsTheCommitmentAndCreditColumns reads the AWS fixture's reserved-instance row and
// its credit to the cent.
func TestParseKeepsTheCommitmentAndCreditColumns(t *testing.T) {
	ex, err := ReadFile(fixtures[0])
	if err != nil {
		t.Fatal(err)
	}
	ri, credit := ex.Charges[0], ex.Charges[3]
	if ri.CommitmentStatus != "Used" || ri.Billed != 0 || ri.Effective != 550 || ri.Contracted != 983.2 || ri.PricingCategory != "Committed" {
		t.Errorf("reserved row: %+v", ri)
	}
	if credit.Category != "Credit" || credit.Billed != -50 || credit.Effective != -50 {
		t.Errorf("credit row: %+v", credit)
	}
}

// csvEdit returns the AWS fixture with one cell of data row 2 replaced, or a column removed when
// value is "<drop>".
func csvEdit(t *testing.T, column, value string) []byte {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(readFixture(t, fixtures[0]))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, c := range recs[0] {
		if c == column {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no column %s", column)
	}
	for i := range recs {
		switch {
		case value == "<drop>":
			recs[i] = append(recs[i][:col:col], recs[i][col+1:]...)
		case i == 2:
			recs[i][col] = value
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestParseMalformed(t *testing.T) {
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		zw.Write(b)
		zw.Close()
		return out.Bytes()
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"missing mandatory column", csvEdit(t, "BilledCost", "<drop>"), "bad.csv: header, column BilledCost: is missing"},
		{"wrong type", csvEdit(t, "BilledCost", "96,80"), `bad.csv: row 2, column BilledCost: "96,80" is not a decimal number`},
		{"non-UTC time", csvEdit(t, "ChargePeriodStart", "2026-11-30T00:00:00+01:00"), "bad.csv: row 2, column ChargePeriodStart: \"2026-11-30T00:00:00+01:00\" is not UTC"},
		{"time without a zone", csvEdit(t, "ChargePeriodEnd", "2026-12-01T00:00:00"), "bad.csv: row 2, column ChargePeriodEnd: \"2026-12-01T00:00:00\" is not a UTC date and time"},
		{"gzipped, wrong type", gz(csvEdit(t, "EffectiveCost", "n/a")), `bad.csv: row 2, column EffectiveCost: "n/a" is not a decimal number`},
		{"value not allowed", csvEdit(t, "ChargeCategory", "Refund"), "row 2, column ChargeCategory: \"Refund\" is not allowed"},
		{"mandatory null", csvEdit(t, "BillingAccountId", ""), "row 2, column BillingAccountId: is empty"},
		{"bad currency", csvEdit(t, "BillingCurrency", "usd"), "row 2, column BillingCurrency: \"usd\" is not an ISO 4217"},
		{"tags not an object", csvEdit(t, "Tags", "[1,2]"), "row 2, column Tags: \"[1,2]\" is not a JSON object"},
		{"charge period backwards", csvEdit(t, "ChargePeriodEnd", "2026-11-29T00:00:00Z"), "row 2, column ChargePeriodEnd: 2026-11-29T00:00:00Z is not after ChargePeriodStart"},
		{"usage without a quantity", csvEdit(t, "PricingQuantity", ""), "row 2, column PricingQuantity: is empty on a Usage charge"},
		{"status without a commitment", csvEdit(t, "CommitmentDiscountStatus", "Used"), "row 2, column CommitmentDiscountStatus: is set on a row without a CommitmentDiscountId"},
		{"committed without a commitment", csvEdit(t, "PricingCategory", "Committed"), "row 2, column CommitmentDiscountId: is empty (or missing) on a Usage row priced Committed"},
		{"empty", nil, "bad.csv: empty file"},
		{"ragged row", []byte(strings.Join(MandatoryColumns(), ",") + "\n1,2\n"), "bad.csv: row 1: "},
		{"not gzip", []byte{0x1f, 0x8b, 0, 1}, "bad.csv: not a gzip file"},
		{"damaged parquet", []byte("PAR1 not really"), "bad.csv: not a readable Parquet file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := Parse("bad.csv", tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if ex != nil {
				t.Errorf("%d charges returned with the error, want none", len(ex.Charges))
			}
		})
	}
}

// parquetOf rewrites a CSV fixture as Parquet with WriteParquet (the writer of Bursar's own
// export): FOCUS columns typed, x_ columns as strings.
func parquetOf(t testing.TB, csvData []byte) []byte {
	t.Helper()
	recs, err := csvRecords("in.csv", csvData)
	if err != nil {
		t.Fatal(err)
	}
	r, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(csvData, []byte("\xef\xbb\xbf")))).Read()
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]map[string]any, len(recs))
	for i, rec := range recs {
		rows[i] = map[string]any{}
		for k, v := range rec {
			rows[i][k] = v
		}
	}
	var b bytes.Buffer
	if err := WriteParquet(&b, r, rows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestParquetReadsAsCSV: each fixture written as Parquet (and gzipped) parses to the same
// charges as its CSV.
func TestParquetReadsAsCSV(t *testing.T) {
	for _, f := range fixtures {
		data := readFixture(t, f)
		want, err := Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		pq := parquetOf(t, data)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(pq)
		zw.Close()
		for name, b := range map[string][]byte{"parquet": pq, "parquet.gz": gz.Bytes()} {
			got, err := Parse(f+"."+name, b)
			if err != nil {
				t.Fatalf("%s as %s: %v", f, name, err)
			}
			for i := range got.Charges {
				if got.Charges[i].File != f+"."+name {
					t.Fatalf("%s as %s: charge %d is of file %q", f, name, i, got.Charges[i].File)
				}
				got.Charges[i].File = f // the same charges, read from another file
			}
			if !reflect.DeepEqual(got.Charges, want.Charges) {
				t.Errorf("%s as %s:\n got %+v\nwant %+v", f, name, got.Charges, want.Charges)
			}
		}
	}
}

func TestParquetNotUTCIsRefused(t *testing.T) {
	// A Parquet timestamp not adjusted to UTC has no zone: FOCUS refuses it like a CSV time
	// without one. WriteParquet writes UTC timestamps, so the file is built by hand here.
	data := parquetLocalTime(t)
	_, err := Parse("local.parquet", data)
	if err == nil || !strings.Contains(err.Error(), "local.parquet: row 1, column ChargePeriodStart: is a timestamp not adjusted to UTC") {
		t.Fatalf("error %v", err)
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.csv.gz", "a.parquet", "notes.txt", "sub/c.CSV"} {
		p := filepath.Join(dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	got, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.csv.gz"), filepath.Join(dir, "sub/c.CSV")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	if _, err := Files(filepath.Join(dir, "sub", "none")); err == nil {
		t.Error("no error for a missing path")
	}
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	if _, err := Files(filepath.Join(dir, "empty")); err == nil || !strings.Contains(err.Error(), "no .csv") {
		t.Errorf("error %v for a directory without exports", err)
	}
}

// FuzzParse: no input makes the parser panic, and a file it accepts yields charges whose periods
// are in order.
func FuzzParse(f *testing.F) {
	for _, name := range fixtures {
		b := readFixture(f, name)
		f.Add(b)
		f.Add(parquetOf(f, b))
	}
	f.Add([]byte("PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ex, err := Parse("fuzz", data)
		if err != nil {
			return
		}
		for _, c := range ex.Charges {
			if !c.End.After(c.Start) || !c.PeriodEnd.After(c.PeriodStart) {
				t.Fatalf("accepted a charge with periods out of order: %+v", c)
			}
		}
	})
}

// parquetLocalTime is the Azure fixture as Parquet with ChargePeriodStart a timestamp not
// adjusted to UTC, every other column a string.
func parquetLocalTime(t *testing.T) []byte {
	t.Helper()
	recs, err := csvRecords("in.csv", readFixture(t, fixtures[1]))
	if err != nil {
		t.Fatal(err)
	}
	group := parquet.Group{}
	for k := range recs[0] {
		group[k] = parquet.Optional(parquet.String())
	}
	group["ChargePeriodStart"] = parquet.TimestampAdjusted(parquet.Millisecond, false)
	var b bytes.Buffer
	w := parquet.NewWriter(&b, parquet.NewSchema("focus", group))
	row := map[string]any{}
	for k, v := range recs[0] {
		if v != "" {
			row[k] = v
		}
	}
	row["ChargePeriodStart"] = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestNewMetadata(t *testing.T) {
	created := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := NewMetadata("Bursar", []string{"BilledCost", "ChargePeriodStart", "Tags", "x_PromptTokens", "x_Workload"},
		map[string]Type{"x_PromptTokens": Decimal}, created)
	s := m.Schemas[0]
	if s.FocusVersion != Version || s.CreationDate != "2026-12-01T00:00:00Z" || m.DataGenerator.DataGenerator != "Bursar" {
		t.Errorf("metadata %+v", m)
	}
	var got []string
	for _, d := range s.ColumnDefinitions {
		got = append(got, d.ColumnName+":"+d.DataType+":"+d.ProviderName)
	}
	want := []string{"BilledCost:Decimal:", "ChargePeriodStart:DateTime:", "Tags:JSON:", "x_PromptTokens:Decimal:Bursar", "x_Workload:String:Bursar"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns %v, want %v", got, want)
	}
	if again := NewMetadata("Bursar", []string{"BilledCost"}, nil, created.Add(time.Hour)); again.Schemas[0].SchemaID == s.SchemaID {
		t.Error("different columns have the same schema id")
	}
}

// awsParquetRow is a FOCUS row as AWS writes it to Parquet: Tags a map<string,string>.
type awsParquetRow struct {
	BilledCost         float64           `parquet:"BilledCost"`
	BillingAccountID   string            `parquet:"BillingAccountId"`
	BillingAccountName string            `parquet:"BillingAccountName,optional"`
	BillingCurrency    string            `parquet:"BillingCurrency"`
	BillingPeriodEnd   time.Time         `parquet:"BillingPeriodEnd,timestamp(millisecond)"`
	BillingPeriodStart time.Time         `parquet:"BillingPeriodStart,timestamp(millisecond)"`
	ChargeCategory     string            `parquet:"ChargeCategory"`
	ChargeClass        string            `parquet:"ChargeClass,optional"`
	ChargeDescription  string            `parquet:"ChargeDescription,optional"`
	ChargePeriodEnd    time.Time         `parquet:"ChargePeriodEnd,timestamp(millisecond)"`
	ChargePeriodStart  time.Time         `parquet:"ChargePeriodStart,timestamp(millisecond)"`
	ContractedCost     float64           `parquet:"ContractedCost"`
	EffectiveCost      float64           `parquet:"EffectiveCost"`
	InvoiceIssuerName  string            `parquet:"InvoiceIssuerName"`
	ListCost           float64           `parquet:"ListCost"`
	PricingQuantity    float64           `parquet:"PricingQuantity"`
	PricingUnit        string            `parquet:"PricingUnit"`
	ProviderName       string            `parquet:"ProviderName"`
	PublisherName      string            `parquet:"PublisherName"`
	ServiceCategory    string            `parquet:"ServiceCategory"`
	ServiceName        string            `parquet:"ServiceName"`
	Tags               map[string]string `parquet:"Tags"`
}

// TestParquetTagsMap: AWS writes Tags as a Parquet map<string,string>, not a JSON string; it
// reads as the same tags, and UTC timestamps as times.
func TestParquetTagsMap(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	err := parquet.Write(&b, []awsParquetRow{{BilledCost: 96.8, BillingAccountID: "111122223333", BillingCurrency: "USD",
		BillingPeriodStart: day.AddDate(0, 0, -29), BillingPeriodEnd: day.AddDate(0, 0, 1), ChargeCategory: "Usage",
		ChargePeriodStart: day, ChargePeriodEnd: day.AddDate(0, 0, 1), ContractedCost: 96.8, EffectiveCost: 96.8,
		InvoiceIssuerName: "AWS", ListCost: 262.16, PricingQuantity: 8, PricingUnit: "Hours", ProviderName: "AWS",
		PublisherName: "AWS", ServiceCategory: "Compute", ServiceName: "Amazon Elastic Compute Cloud",
		Tags: map[string]string{"bursar-workload": "embed", "team": "search"}}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Parse("tags.parquet", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	c := ex.Charges[0]
	if !reflect.DeepEqual(c.Tags, map[string]string{"bursar-workload": "embed", "team": "search"}) || !c.Start.Equal(day) || c.Billed != 96.8 {
		t.Errorf("charge %+v", c)
	}
}
