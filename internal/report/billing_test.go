package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// The hand-written exports of internal/billing.
var (
	awsExport   = "../billing/testdata/aws-focus-2026-11.csv"
	azureExport = "../billing/testdata/azure-focus-2026-11.csv"
	gcpExport   = "../billing/testdata/gcp-focus-2026-11.csv"
)

// billingFleet has the fixtures' locations and workloads, and lambda-tx, where no billing is
// imported.
func billingFleet() *fleet.Config {
	return &fleet.Config{
		Locations: []fleet.Location{
			{Name: "aws-use1", Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}, AccountIDs: []string{"444455556666"}},
			{Name: "aws-usw2", Provider: "aws", Region: "us-west-2", AccountIDs: []string{"777788889999"}},
			{Name: "azure-eus", Provider: "azure", Region: "eastus"},
			{Name: "gcp-euw4", Provider: "gcp", Region: "europe-west4"},
			{Name: "lambda-tx", Provider: "lambda", Region: "us-south-1"},
		},
		Workloads: []fleet.Workload{{Name: "chat"}, {Name: "embed"}, {Name: "eu-chat"}, {Name: "batch"}},
	}
}

// billedHistory is what Bursar saw on Nov 30: chat on an on-demand p5 at aws-use1 for 10 h at
// 98.32 (983.20), embed on a spot p4d there for 8 h at 12.00 (96.00), chat on an ND96isr H100 v5
// at azure-eus for 4 h at 98.00 (392.00), eu-chat on a spot a3 at gcp-euw4 for 6 h at 30.00
// (180.00), batch at lambda-tx for 5 h at 2.00 (10.00); chat at aws-use1 served 100M tokens.
// The actuators named the instances at aws-use1 and gcp-euw4 (heldInstances); azure-eus's and
// lambda-tx's history names none.
func billedHistory(t *testing.T) *store.Store {
	st := storetest.New(t)
	seedHeldReplicas(t, st, heldInstances,
		replicaSample{"00:00", "chat", "aws-use1", "aws", "on_demand", "aws-use1/us-east-1a/p5.48xlarge/on_demand", "H100-80GB", 8, 1, 98.32},
		replicaSample{"10:00", "chat", "aws-use1", "aws", "on_demand", "aws-use1/us-east-1a/p5.48xlarge/on_demand", "H100-80GB", 8, 0, 98.32},
		replicaSample{"00:00", "embed", "aws-use1", "aws", "spot", "aws-use1/us-east-1b/p4d.24xlarge/spot", "A100-40GB", 8, 1, 12},
		replicaSample{"08:00", "embed", "aws-use1", "aws", "spot", "aws-use1/us-east-1b/p4d.24xlarge/spot", "A100-40GB", 8, 0, 12},
		replicaSample{"00:00", "chat", "azure-eus", "azure", "on_demand", "azure-eus/-/Standard_ND96isr_H100_v5/on_demand", "H100-80GB", 8, 1, 98},
		replicaSample{"04:00", "chat", "azure-eus", "azure", "on_demand", "azure-eus/-/Standard_ND96isr_H100_v5/on_demand", "H100-80GB", 8, 0, 98},
		replicaSample{"00:00", "eu-chat", "gcp-euw4", "gcp", "spot", "gcp-euw4/europe-west4-a/a3-highgpu-8g/spot", "H100-80GB", 8, 1, 30},
		replicaSample{"06:00", "eu-chat", "gcp-euw4", "gcp", "spot", "gcp-euw4/europe-west4-a/a3-highgpu-8g/spot", "H100-80GB", 8, 0, 30},
		replicaSample{"00:00", "batch", "lambda-tx", "lambda", "on_demand", "lambda-tx/-/gpu_1x_a10/on_demand", "A10-24GB", 1, 1, 2},
		replicaSample{"05:00", "batch", "lambda-tx", "lambda", "on_demand", "lambda-tx/-/gpu_1x_a10/on_demand", "A10-24GB", 1, 0, 2},
	)
	seedTokens(t, st,
		tokenSample{"00:00", "chat", "aws-use1", "r1", 0, 0, 0, false},
		tokenSample{"10:00", "chat", "aws-use1", "r1", 80_000_000, 20_000_000, 50_000, false},
	)
	return st
}

// heldInstances are the instances of billedHistory's replicas, in the forms the actuators
// report them: an AWS instance id, a Kubernetes node's providerID.
var heldInstances = map[string][]string{
	"chat@aws-use1":    {"i-0p5aaaa"},
	"embed@aws-use1":   {"aws:///us-east-1b/i-0p4dbbbb"},
	"eu-chat@gcp-euw4": {"gce://bursar-eu/europe-west4-a/eu-chat-0"},
}

// nov30 is the options for the day, reported after it.
func nov30(by ...Dim) Options {
	return Options{Window: Window{Since: at("00:00"), Until: at("00:00").Add(24 * time.Hour)}, By: by,
		Now: at("00:00").Add(24 * time.Hour), Fleet: billingFleet()}
}

func importFiles(t *testing.T, st *store.Store, now time.Time, paths ...string) []Imported {
	t.Helper()
	imp, err := ImportFiles(ctxT(t), st, paths, now)
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

func reconcileRows(t *testing.T, st *store.Store) []string {
	t.Helper()
	res, err := Reconcile(ctxT(t), st, nov30())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range append(res.Rows, res.Total) {
		out = append(out, fmt.Sprintf("%v %v %v %.2f %.2f %.2f %.2f %.2f", r["day"], r["location"], r["workload"],
			r["estimated_usd"], r["billed_cost"], r["effective_cost"], r["difference"], r["commitment"]))
	}
	return out
}

// wantReconciled is the fixtures reconciled by hand (internal/billing's TestReconcileFixtures,
// "by resource id", has the arithmetic), with batch at lambda-tx, estimated only. chat's RI hours
// on i-0p5aaaa, embed's spot hours on i-0p4dbbbb (tagged chat) and eu-chat's on eu-chat-0 are
// matched by resource id; the p5 of i-0p5eeee (294.96), held by no replica, is unmatched with
// the g5 (24.00). Totals: estimated 983.20 + 96.00 + 392.00 + 180.00 + 10.00 = 1661.20; billed
// -50 + 318.96 + 0 + 0 + 96.80 + 30 + 491.60 + 352.80 + 189 = 1429.16; effective -50 + 318.96 +
// 110 + 550 + 96.80 + 30 + 491.60 + 352.80 + 189 = 2089.16; difference 2089.16 - 1661.20 =
// 427.96; commitment 110 - 433.20 = -323.20.
var wantReconciled = []string{
	"2026-11-30 aws-use1 (credits) 0.00 -50.00 -50.00 -50.00 0.00",
	"2026-11-30 aws-use1 (unmatched) 0.00 318.96 318.96 318.96 0.00",
	"2026-11-30 aws-use1 (unused commitment) 0.00 0.00 110.00 110.00 110.00",
	"2026-11-30 aws-use1 chat 983.20 0.00 550.00 -433.20 -433.20",
	"2026-11-30 aws-use1 embed 96.00 96.80 96.80 0.80 0.00",
	"2026-11-30 aws/* (tax) 0.00 30.00 30.00 30.00 0.00",
	"2026-11-30 aws/us-west-1 (unmatched) 0.00 491.60 491.60 491.60 0.00",
	"2026-11-30 azure-eus chat 392.00 352.80 352.80 -39.20 0.00",
	"2026-11-30 gcp-euw4 eu-chat 180.00 189.00 189.00 9.00 0.00",
	"2026-11-30 lambda-tx batch 10.00 0.00 0.00 -10.00 0.00",
	"TOTAL <nil> <nil> 1661.20 1429.16 2089.16 427.96 -323.20",
}

func TestImportThenReconcile(t *testing.T) {
	st := billedHistory(t)
	imp := importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport, azureExport, gcpExport)
	if len(imp) != 3 || imp[0].Skipped {
		t.Fatalf("imported %+v, want three new exports", imp)
	}
	got := reconcileRows(t, st)
	if strings.Join(got, "\n") != strings.Join(wantReconciled, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantReconciled, "\n"))
	}
	res, err := Reconcile(ctxT(t), st, nov30())
	if err != nil {
		t.Fatal(err)
	}
	causes := map[string]string{}
	for _, r := range res.Rows {
		causes[r["location"].(string)+" "+r["workload"].(string)] = r["causes"].(string)
	}
	for k, want := range map[string]string{
		"aws-use1 chat":                "commitment discount -433.20; matched by resource id",
		"aws-use1 embed":               "price or usage +0.80; matched by resource id",
		"azure-eus chat":               "price or usage -39.20; matched by tag",
		"gcp-euw4 eu-chat":             "price or usage +9.00; matched by resource id",
		"aws-use1 (unmatched)":         "billed usage Bursar has no replica for (2 charges)",
		"lambda-tx batch":              "no billing imported for this location and day",
		"aws-use1 (unused commitment)": "unused commitment",
	} {
		if causes[k] != want {
			t.Errorf("%s: causes %q, want %q", k, causes[k], want)
		}
	}
	if want := "usage charges matched: 3 by resource id, 1 by tag, 0 by location and SKU, 0 by location, 3 unmatched"; !slices.Contains(res.Notes, want) {
		t.Errorf("notes %q lack %q", res.Notes, want)
	}
}

func TestImportTwiceChangesNothing(t *testing.T) {
	st := billedHistory(t)
	importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport, azureExport, gcpExport)
	again := importFiles(t, st, at("00:00").Add(72*time.Hour), awsExport, azureExport, gcpExport)
	for _, i := range again {
		if !i.Skipped {
			t.Errorf("second import of %s %s wrote it again", i.Provider, i.Account)
		}
	}
	if got := count(t, st, "billing_charge"); got != 10 {
		t.Errorf("%d charges stored, want the fixtures' 10", got)
	}
	if got := count(t, st, "billing_export"); got != 3 {
		t.Errorf("%d exports registered, want 3", got)
	}
	if got := reconcileRows(t, st); strings.Join(got, "\n") != strings.Join(wantReconciled, "\n") {
		t.Errorf("after a second import:\n%s", strings.Join(got, "\n"))
	}
}

func count(t *testing.T, st *store.Store, table string) int64 {
	rows, err := queryRows[struct{ N int64 }](ctxT(t), st, "SELECT count() AS N FROM "+st.Table(table))
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	return rows[0].N
}

// TestNewerExportReplacesOlder: AWS restates the month: embed's spot hours at 12.15 (97.20) and
// no credit. The restated export replaces the first for every reader; importing the first again
// afterwards changes nothing.
func TestNewerExportReplacesOlder(t *testing.T) {
	st := billedHistory(t)
	v1, err := os.ReadFile(awsExport)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(v1), "\n") {
		if !strings.Contains(line, "promotional credit") {
			kept = append(kept, strings.ReplaceAll(line, "96.8,", "97.2,"))
		}
	}
	v2 := filepath.Join(t.TempDir(), "aws-focus-2026-11-restated.csv")
	if err := os.WriteFile(v2, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport)
	importFiles(t, st, at("00:00").Add(49*time.Hour), v2)
	if imp := importFiles(t, st, at("00:00").Add(50*time.Hour), awsExport); !imp[0].Skipped {
		t.Errorf("the first export, imported again, was written again")
	}
	got := strings.Join(reconcileRows(t, st), "\n")
	if strings.Contains(got, "(credits)") || !strings.Contains(got, "aws-use1 embed 96.00 97.20 97.20 1.20") {
		t.Errorf("after the restated export:\n%s", got)
	}
}

func TestImportMalformedImportsNothing(t *testing.T) {
	st := billedHistory(t)
	dir := t.TempDir()
	good, err := os.ReadFile(gcpExport)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), "2026-11-30 00:00:00 UTC", "2026-11-30 01:00:00+01:00", 1)
	os.WriteFile(filepath.Join(dir, "a-good.csv"), good, 0o644)
	os.WriteFile(filepath.Join(dir, "b-bad.csv"), []byte(bad), 0o644)
	_, err = ImportFiles(ctxT(t), st, []string{dir}, at("12:00"))
	want := filepath.Join(dir, "b-bad.csv") + `: row 1, column ChargePeriodStart: "2026-11-30 01:00:00+01:00" is not a UTC date and time`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was imported") {
		t.Fatalf("error %v, want it to contain %q", err, want)
	}
	if n := count(t, st, "billing_charge"); n != 0 {
		t.Errorf("%d charges stored from a failed import, want 0", n)
	}
}

// TestReconcileFilterKeepsTheMatch: a filter picks lines, not the estimates charges are matched
// against: the unmatched spend at aws-use1 is the g5's 24.00 and i-0p5eeee's 294.96, not also
// the charges of the workloads the filter leaves out.
func TestReconcileFilterKeepsTheMatch(t *testing.T) {
	st := billedHistory(t)
	importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport)
	o := nov30()
	o.Filter = Filter{Workload: {"(unmatched)"}, Location: {"aws-use1"}}
	res, err := Reconcile(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0]["effective_cost"] != 318.96 {
		t.Errorf("rows %v, want the g5's and i-0p5eeee's 318.96 alone", res.Rows)
	}
}

// TestReconcileCountsTheWindowsShare: a daily charge over a half-day window counts half: embed's
// 96.80 spot day is 48.40 from 00:00 to 12:00, against its whole 8 h estimate, 96.00.
func TestReconcileCountsTheWindowsShare(t *testing.T) {
	st := billedHistory(t)
	importFiles(t, st, at("00:00").Add(48*time.Hour), awsExport)
	o := nov30()
	o.Window.Until, o.Now = at("12:00"), at("12:00")
	o.Filter = Filter{Workload: {"embed"}}
	res, err := Reconcile(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0]["effective_cost"] != 48.4 || res.Rows[0]["estimated_usd"] != 96.0 {
		t.Errorf("rows %v, want embed at 48.40 effective against 96.00", res.Rows)
	}
}
