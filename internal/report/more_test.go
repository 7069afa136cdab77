package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/budget"
)

func TestBudget(t *testing.T) {
	st := history(t)
	scope, err := budget.ParseScope("workload=chat")
	if err != nil {
		t.Fatal(err)
	}
	warn, _ := budget.ParseLevel("40%")
	policies := []budget.Policy{
		{Name: "chat-month", Scope: scope, Period: budget.Month, Limit: 100, Currency: "USD",
			Thresholds: []budget.Threshold{{At: warn, On: budget.Actual, Action: budget.Notify}}},
		{Name: "gcp-day", Scope: budget.Scope{Provider: "gcp"}, Period: budget.Day, Limit: 50, Currency: "USD"},
	}
	res, err := Budget(ctxT(t), st, policies, opts("09:00", "12:00"))
	if err != nil {
		t.Fatal(err)
	}
	// At 12:30: aws $27 to 12:00 and 2 x $5 x 0.5h since; gcp 1 x $3 x 3.5h. Burning $10 + $3 an
	// hour, 11.5 hours before the month (and the day) ends.
	want := []string{
		"chat-month workload=chat month 2026-11-01T00:00:00Z USD spend=42.5 spend_pct=42.5 burn_per_hour=13 forecast=192 forecast_pct=192 reached=actual:40% notify",
		"gcp-day provider=gcp day 2026-11-30T00:00:00Z USD spend=10.5 spend_pct=21 burn_per_hour=3 forecast=45 forecast_pct=90 reached=",
	}
	g := got(res, "spend", "spend_pct", "burn_per_hour", "forecast", "forecast_pct", "reached")
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

func TestCommitments(t *testing.T) {
	st := history(t)
	seed(t, st, "price_observed", "id, at, version, provider, region, zone, instance_type, gpu_model, gpu_count, "+
		"gpu_memory_gb, market, usd_per_hour, source",
		[]any{"p1", at("08:00"), "1", "aws", "us-west-2", "", "p5.48xlarge", "H100-80GB", 8, 80, "on_demand", 64, "aws"},
		[]any{"p2", at("08:00"), "1", "gcp", "us-central1", "", "a2-ultragpu-1g", "A100-80GB", 1, 80, "on_demand", 3, "gcp"},
	)
	o := CommitOptions{Options: opts("09:00", "12:00"), Discount: 0.3}
	res, err := Commitments(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	// A100: 1 GPU every hour; reserving it at $2.10 saves 3 x ($3 - $2.10). H100: 4 GPUs every
	// hour, paid $2.25 on spot; reserved at 0.7 x $8 = $5.60 it would have cost 4 x 3 x 3.35 more.
	want := []string{
		"A100-80GB hours=3 avg_gpus=1 floor_gpus=1 paid_usd_per_gpu_hour=3 reserved_usd_per_gpu_hour=2.1 covered_gpu_hours=3 saving_usd=2.7",
		"H100-80GB hours=3 avg_gpus=4 floor_gpus=4 paid_usd_per_gpu_hour=2.25 reserved_usd_per_gpu_hour=5.6 covered_gpu_hours=12 saving_usd=-40.2",
	}
	g := got(res, "hours", "avg_gpus", "floor_gpus", "paid_usd_per_gpu_hour", "reserved_usd_per_gpu_hour", "covered_gpu_hours", "saving_usd")
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
	// Over 09:00-13:00 at 12:30, the 12:00 hour runs half: the floor is the lowest hour.
	if p := percentile([]float64{4, 4, 4, 2}, 10); p != 2 {
		t.Errorf("p10 of [4 4 4 2] = %v, want 2", p)
	}
}

func TestFOCUS(t *testing.T) {
	st := history(t)
	month, err := ParseMonth("2026-11")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Window: month, Now: at("12:30"), Fleet: testFleet()}
	res, err := FOCUS(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, "csv", res, ""); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := recs[0]
	if !slices.Equal(header, FOCUSColumns()) {
		t.Errorf("header %v, want %v", header, FOCUSColumns())
	}
	if len(recs) != 3 {
		t.Fatalf("%d rows, want one for aws spot and one for gcp on-demand on Nov 30", len(recs)-1)
	}
	row := func(i int) map[string]string {
		m := map[string]string{}
		for j, c := range header {
			m[c] = recs[i][j]
		}
		return m
	}
	// Up to 12:00, when the fleet was last heard from (the report runs at 12:30): aws 2 x $4 x
	// 1.5h + 2 x $5 x 1.5h over 2 x 2 x 3 GPU-hours; gcp $3 x 3h.
	tests := []struct {
		name string
		row  map[string]string
		want map[string]string
	}{
		{"aws spot", row(1), map[string]string{"BilledCost": "27", "EffectiveCost": "27", "ConsumedQuantity": "12",
			"ConsumedUnit": "GPU-Hours", "PricingCategory": "Dynamic", "ProviderName": "aws", "RegionId": "us-east-1",
			"ChargePeriodStart": "2026-11-30T00:00:00Z", "ChargePeriodEnd": "2026-12-01T00:00:00Z",
			"BillingPeriodStart": "2026-11-01T00:00:00Z", "BillingPeriodEnd": "2026-12-01T00:00:00Z",
			"x_PromptTokens": "4500000", "x_GenerationTokens": "1500000", "ChargeCategory": "Usage"}},
		{"gcp on-demand", row(2), map[string]string{"BilledCost": "9", "ConsumedQuantity": "3",
			"PricingCategory": "Standard", "x_PromptTokens": "2000000", "x_GenerationTokens": "1000000"}},
	}
	for _, tt := range tests {
		for k, v := range tt.want {
			if tt.row[k] != v {
				t.Errorf("%s: %s = %q, want %q", tt.name, k, tt.row[k], v)
			}
		}
	}
}
