package report

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/billing"
)

// validRow13 is a 1.3 row as the export writes one: chat's spot capacity at aws-use1, all of it.
func validRow13() billing.Record {
	return billing.Record{
		"BilledCost": "27", "BillingAccountId": "444455556666", "BillingAccountName": "aws 444455556666", "BillingCurrency": "USD",
		"BillingPeriodStart": "2026-11-01T00:00:00Z", "BillingPeriodEnd": "2026-12-01T00:00:00Z", "ChargeCategory": "Usage",
		"ChargeClass": "", "ChargeDescription": "chat", "ChargePeriodStart": "2026-11-30T00:00:00Z", "ChargePeriodEnd": "2026-11-30T12:00:00Z",
		"ContractedCost": "27", "EffectiveCost": "27", "ListCost": "27", "InvoiceIssuerName": "aws", "ProviderName": "aws",
		"PublisherName": "aws", "ServiceProviderName": "aws", "HostProviderName": "aws", "PricingQuantity": "6",
		"PricingUnit": "GPU-Hours", "PricingCategory": "Dynamic", "ServiceCategory": "Compute", "ServiceName": "GPU compute",
		"ResourceId": "aws-use1/spot/H100-80GB", "Tags": `{"location":"aws-use1","market":"spot"}`,
		"AllocatedMethodId": AllocationMethod, "AllocatedResourceId": "chat@aws-use1/spot/H100-80GB", "AllocatedResourceName": "chat",
		"ContractApplied": "", "AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":1,"UsageUnit":"GPU-Hours","UsageQuantity":6}]}`,
		"AllocatedTags": `{"workload":"chat"}`, "x_Workload": "chat",
	}
}

func headerOf(r billing.Record) []string { return slices.Sorted(maps.Keys(r)) }

// TestCheckFOCUS13Malformed: each break of a 1.3 rule is refused, naming the row and column.
func TestCheckFOCUS13Malformed(t *testing.T) {
	contract := func(e string) string { return `{"Elements":[` + e + `]}` }
	tests := []struct {
		name    string
		set     map[string]string // cells changed on row 1
		drop    string            // a column left out
		second  map[string]string // a second row: validRow13 with these cells
		wantErr []string
	}{
		{name: "no ServiceProviderName", drop: "ServiceProviderName", wantErr: []string{"header", "ServiceProviderName", "mandatory"}},
		{name: "null HostProviderName", set: map[string]string{"HostProviderName": ""}, wantErr: []string{"row 1", "HostProviderName", "must not be null"}},
		{name: "unknown column", set: map[string]string{"Provider": "aws"}, wantErr: []string{"header", "Provider", "x_"}},
		{name: "bad ChargeCategory", set: map[string]string{"ChargeCategory": "Use"}, wantErr: []string{"ChargeCategory", "not allowed"}},
		{name: "details not JSON", set: map[string]string{"AllocatedMethodDetails": "ratio=1"}, wantErr: []string{"AllocatedMethodDetails", "JSON object"}},
		{name: "details without Elements", set: map[string]string{"AllocatedMethodDetails": `{"Ratio":1}`}, wantErr: []string{"AllocatedMethodDetails", "Ratio"}},
		{name: "empty Elements", set: map[string]string{"AllocatedMethodDetails": `{"Elements":[]}`}, wantErr: []string{"AllocatedMethodDetails", "Elements"}},
		{name: "ratio over 1", set: map[string]string{"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":1.5}]}`}, wantErr: []string{"AllocatedRatio", "0 to 1"}},
		{name: "ratio a string", set: map[string]string{"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":"1"}]}`}, wantErr: []string{"AllocatedRatio", "not a number"}},
		{name: "quantity without unit", set: map[string]string{"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":1,"UsageQuantity":6}]}`}, wantErr: []string{"UsageUnit"}},
		{name: "unknown element key", set: map[string]string{"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":1,"Share":1}]}`}, wantErr: []string{"Share", "x_"}},
		{name: "ratios short of 1", set: map[string]string{"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":0.5,"UsageUnit":"GPU-Hours"}]}`},
			second:  map[string]string{"AllocatedMethodDetails": `{"Elements":[{"AllocatedRatio":0.4,"UsageUnit":"GPU-Hours"}]}`},
			wantErr: []string{"row 1", "add up to 0.9"}},
		{name: "allocation without method", set: map[string]string{"AllocatedMethodId": ""}, wantErr: []string{"AllocatedResourceId", "without an AllocatedMethodId"}},
		{name: "tag in both", set: map[string]string{"AllocatedTags": `{"market":"spot"}`}, wantErr: []string{"AllocatedTags", `"market"`, "Tags holds"}},
		{name: "contract without id", set: map[string]string{"ContractApplied": contract(`{"ContractCommitmentID":"c","ContractCommitmentAppliedCost":1}`)},
			wantErr: []string{"ContractApplied", "ContractID", "missing"}},
		{name: "contract quantity without unit", set: map[string]string{"ContractApplied": contract(`{"ContractID":"k","ContractCommitmentID":"c","ContractCommitmentAppliedQuantity":6}`)},
			wantErr: []string{"ContractApplied", "go together"}},
		{name: "contract applies nothing", set: map[string]string{"ContractApplied": contract(`{"ContractID":"k","ContractCommitmentID":"c"}`)},
			wantErr: []string{"ContractApplied", "neither a cost nor a quantity"}},
		{name: "contract nested custom key", set: map[string]string{"ContractApplied": contract(`{"ContractID":"k","ContractCommitmentID":"c","ContractCommitmentAppliedCost":1,"x_Balance":{"usd":3}}`)},
			wantErr: []string{"ContractApplied", "x_Balance", "nested"}},
		{name: "contract cost not a number", set: map[string]string{"ContractApplied": contract(`{"ContractID":"k","ContractCommitmentID":"c","ContractCommitmentAppliedCost":"18"}`)},
			wantErr: []string{"ContractApplied", "not a number"}},
		{name: "two JSON values", set: map[string]string{"ContractApplied": `{"Elements":[]} {}`}, wantErr: []string{"ContractApplied"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRow13()
			maps.Copy(r, tt.set)
			delete(r, tt.drop)
			recs := []billing.Record{r}
			if tt.second != nil {
				s := validRow13()
				maps.Copy(s, tt.second)
				recs = append(recs, s)
			}
			err := CheckFOCUS("1.3", "focus.csv", headerOf(r), recs)
			var re *billing.RowError
			if !errors.As(err, &re) {
				t.Fatalf("err %v, want a *billing.RowError", err)
			}
			for _, w := range append(tt.wantErr, "focus.csv") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if err := CheckFOCUS("1.3", "focus.csv", headerOf(validRow13()), []billing.Record{validRow13()}); err != nil {
		t.Errorf("the valid row: %v", err)
	}
	// 1.2 knows none of 1.3's columns: the same row is refused there.
	if err := CheckFOCUS("1.2", "focus.csv", headerOf(validRow13()), []billing.Record{validRow13()}); err == nil ||
		!strings.Contains(err.Error(), "not a FOCUS 1.2 column") {
		t.Errorf("a 1.3 row checked as 1.2: %v", err)
	}
}

func TestParseFOCUSVersion(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "1.3", want: "1.3"}, {in: "1.2", want: "1.2"}, {in: " 1.3\n", want: "1.3"},
		{in: "", wantErr: true}, {in: "1.4", wantErr: true}, {in: "v1.3", wantErr: true}, {in: "1.3.0", wantErr: true},
		{in: "1", wantErr: true}, {in: "1.2;1.3", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseFOCUSVersion(tt.in)
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "1.3 (the default) or 1.2") || !strings.Contains(err.Error(), "--focus-version") {
				t.Errorf("ParseFOCUSVersion(%q) = %q, %v; want an error listing the versions", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseFOCUSVersion(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := FOCUSAs("2.0", &Result{}); err == nil {
		t.Error("FOCUSAs 2.0: no error")
	}
}

func FuzzParseFOCUSVersion(f *testing.F) {
	for _, s := range []string{"1.3", "1.2", " 1.2 ", "1.4", "", "v1.3", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseFOCUSVersion(s)
		if err != nil {
			if !strings.Contains(err.Error(), "1.3 (the default) or 1.2") {
				t.Errorf("error %q does not list the versions", err)
			}
			return
		}
		if !slices.Contains(FOCUSVersions, v) || v != strings.TrimSpace(s) {
			t.Errorf("ParseFOCUSVersion(%q) = %q", s, v)
		}
	})
}

// FuzzCheckFOCUS13 feeds the 1.3 JSON object cells to the checker: it never panics, and what it
// accepts holds what the rules say (one row's allocated ratios make the whole origin charge, a
// contract element names its contract).
func FuzzCheckFOCUS13(f *testing.F) {
	r := validRow13()
	f.Add(r["AllocatedMethodDetails"], r["AllocatedTags"], r["Tags"], `{"Elements":[{"ContractID":"k","ContractCommitmentID":"c","ContractCommitmentAppliedCost":1}]}`)
	f.Add(`{"Elements":[{"AllocatedRatio":1e0,"x_A":[1]}]}`, `{}`, `{"a":1}`, `{"Elements":[{}]}`)
	f.Add(`{"Elements":[{"AllocatedRatio":0.9999999}],"x_N":null}`, "", "", `{"Elements":null}`)
	f.Add(`{"Elements":[{"AllocatedRatio":NaN}]}`, `[]`, `null`, `{"Elements":[{"ContractID":1}]}`)
	f.Fuzz(func(t *testing.T, details, allocTags, tags, contract string) {
		r := validRow13()
		r["AllocatedMethodDetails"], r["AllocatedTags"], r["Tags"], r["ContractApplied"] = details, allocTags, tags, contract
		if CheckFOCUS("1.3", "f.csv", headerOf(r), []billing.Record{r}) != nil {
			return
		}
		if details != "" {
			as, err := allocationElements(details)
			if err != nil {
				t.Fatalf("accepted details %q: %v", details, err)
			}
			for _, a := range as {
				if math.Abs(a.ratio-1) > ratioSlack {
					t.Errorf("accepted one charge's ratio %v of its whole origin", a.ratio)
				}
			}
		}
		if contract != "" {
			es, err := jsonElements(contract)
			if err != nil {
				t.Fatalf("accepted ContractApplied %q: %v", contract, err)
			}
			for _, e := range es {
				if id, _ := e["ContractID"].(string); id == "" {
					t.Errorf("accepted a ContractApplied element without ContractID: %q", contract)
				}
			}
		}
	})
}
