package pricesource

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/pricing"
)

const gcpTestKey = "AIzaSyTESTKEY-do-not-leak-123"

func gcpReplay(t *testing.T, page2 []byte, status int) *replayServer {
	first := func(r *http.Request) bool { return r.URL.Query().Get("pageToken") == "" }
	second := func(r *http.Request) bool { return strings.HasPrefix(r.URL.Query().Get("pageToken"), "APKCS1HV") }
	return newReplay(t, reply{match: first, body: fixture(t, "gcp-billing-skus-gpu-page1.json")},
		reply{match: second, body: page2, status: status})
}

func TestGCPBillingReplay(t *testing.T) {
	srv := gcpReplay(t, fixture(t, "gcp-billing-skus-gpu-page2.json"), 200)
	cat, err := (&GCPBilling{APIKey: gcpTestKey, Endpoint: srv.URL}).Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		key      string
		wantGPU  string
		wantUSD  float64
		wantHave bool
	}{
		{name: "A100 on demand (verbatim opencost SKU)", key: "gcp|us-east1||nvidia-tesla-a100:1|on_demand|A100-40GB|1", wantGPU: "A100-40GB", wantUSD: 2.933908, wantHave: true},
		{name: "A100 spot", key: "gcp|us-west1||nvidia-tesla-a100:1|spot|A100-40GB|1", wantGPU: "A100-40GB", wantUSD: 1.1, wantHave: true},
		{name: "H100 on demand, Iowa only", key: "gcp|us-central1||nvidia-h100-80gb:1|on_demand|H100-80GB|1", wantGPU: "H100-80GB", wantUSD: 11.06, wantHave: true},
		{name: "H100 not fanned out", key: "gcp|us-east1||nvidia-h100-80gb:1|on_demand|H100-80GB|1"},
		{name: "L4 commitment is reserved", key: "gcp|us-central1||nvidia-l4:1|reserved|L4|1", wantGPU: "L4", wantUSD: 0.3528, wantHave: true},
	}
	byKey := map[string]pricing.Offer{}
	for _, o := range cat.Offers {
		byKey[o.Key()] = o
		if !o.GPUOnly {
			t.Errorf("%s: GCP GPU SKUs price the GPU alone; want GPUOnly", o.Key())
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := byKey[tt.key]
			if ok != tt.wantHave {
				t.Fatalf("offer %s present = %v, want %v", tt.key, ok, tt.wantHave)
			}
			if ok && (o.GPU != tt.wantGPU || math.Abs(o.PricePerHour-tt.wantUSD) > 1e-9) {
				t.Fatalf("offer = %+v, want %s at %v", o, tt.wantGPU, tt.wantUSD)
			}
		})
	}
	if len(cat.Offers) != 17 {
		t.Errorf("offers = %d, want 17 (A100 6, H100 2, L4 9)", len(cat.Offers))
	}
	if cat.Skipped[pricing.SkipNotGPU] != 1 || cat.Skipped[pricing.SkipExcluded] != 1 {
		t.Errorf("skipped = %v, want 1 not_gpu (A2 core) and 1 excluded (workstation)", cat.Skipped)
	}
	if got := srv.requests[0].URL.Query().Get("key"); got != gcpTestKey {
		t.Errorf("key sent = %q", got)
	}
}

func TestGCPBillingFailures(t *testing.T) {
	for _, tt := range failureReplies {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, tt.reply)
			_, err := (&GCPBilling{APIKey: gcpTestKey, Endpoint: srv.URL}).Fetch(context.Background(), at)
			e := wantKind(t, err, tt.wantKind)
			if e.RetryAfter != tt.wantRetryAfter {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantRetryAfter)
			}
			if strings.Contains(err.Error(), gcpTestKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestGCPBillingBadPages(t *testing.T) {
	page2 := fixture(t, "gcp-billing-skus-gpu-page2.json")
	setPrice := func(units string, nanos float64, currency string) func(map[string]any) {
		return func(d map[string]any) {
			sku := d["skus"].([]any)[0].(map[string]any)
			rate := sku["pricingInfo"].([]any)[0].(map[string]any)["pricingExpression"].(map[string]any)["tieredRates"].([]any)[0].(map[string]any)
			rate["unitPrice"] = map[string]any{"currencyCode": currency, "units": units, "nanos": nanos}
		}
	}
	tests := []struct {
		name        string
		page2       []byte
		status      int
		wantKind    Kind
		wantOffers  int
		wantUnknown string
	}{
		{name: "truncated second page", page2: page2[:len(page2)-40], wantKind: KindDecode},
		{name: "second page 502", page2: []byte("bad gateway"), status: 502, wantKind: KindServer},
		{name: "negative price", page2: edit(t, page2, setPrice("-1", 0, "USD")), wantKind: KindInvalid},
		{name: "negative nanos", page2: edit(t, page2, setPrice("0", -5e8, "USD")), wantKind: KindInvalid},
		{name: "nanos out of range", page2: edit(t, page2, setPrice("0", 2e9, "USD")), wantKind: KindInvalid},
		{name: "units not a number", page2: edit(t, page2, setPrice("one", 0, "USD")), wantKind: KindInvalid},
		{name: "euro", page2: edit(t, page2, setPrice("0", 5e8, "EUR")), wantKind: KindInvalid},
		{name: "zero price skipped", page2: edit(t, page2, setPrice("0", 0, "USD")), wantOffers: 14},
		{name: "unknown GPU counted", page2: edit(t, page2, func(d map[string]any) {
			d["skus"].([]any)[0].(map[string]any)["description"] = "Nvidia Z9000 GPU running in Americas"
		}), wantOffers: 14, wantUnknown: "gcp:Nvidia Z9000 GPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.status == 0 {
				tt.status = 200
			}
			srv := gcpReplay(t, tt.page2, tt.status)
			cat, err := (&GCPBilling{APIKey: gcpTestKey, Endpoint: srv.URL}).Fetch(context.Background(), at)
			if tt.wantKind != "" {
				wantKind(t, err, tt.wantKind)
				if strings.Contains(err.Error(), gcpTestKey) {
					t.Errorf("error leaks the API key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cat.Offers) != tt.wantOffers {
				t.Errorf("offers = %d, want %d", len(cat.Offers), tt.wantOffers)
			}
			if tt.wantUnknown != "" && cat.Unknown[tt.wantUnknown] != 1 {
				t.Errorf("unknown = %v, want %s", cat.Unknown, tt.wantUnknown)
			}
		})
	}
}

// TestGCPBillingNetworkErrorHidesKey: a transport error must not repeat the URL with its key.
func TestGCPBillingNetworkErrorHidesKey(t *testing.T) {
	srv := newReplay(t)
	srv.Close()
	_, err := (&GCPBilling{APIKey: gcpTestKey, Endpoint: srv.URL}).Fetch(context.Background(), at)
	wantKind(t, err, KindNetwork)
	if strings.Contains(err.Error(), gcpTestKey) || strings.Contains(err.Error(), "key=") {
		t.Fatalf("error leaks the API key: %v", err)
	}
}

func TestGCPBillingRegionFilter(t *testing.T) {
	srv := gcpReplay(t, fixture(t, "gcp-billing-skus-gpu-page2.json"), 200)
	cat, err := (&GCPBilling{Endpoint: srv.URL, Regions: []string{"us-east1"}}).Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range cat.Offers {
		if o.Region != "us-east1" {
			t.Errorf("offer outside the region filter: %s", o.Key())
		}
	}
	if len(cat.Offers) != 5 {
		t.Errorf("offers = %d, want 5 (A100 x2, L4 x3)", len(cat.Offers))
	}
}

func FuzzParseGCPPage(f *testing.F) {
	f.Add(fixture(f, "gcp-billing-skus-gpu-page1.json"))
	f.Add(fixture(f, "gcp-billing-skus-gpu-page2.json"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var cat pricing.Catalog
		_, err := parseGCPPage(bytes.NewReader(body), func(s gcpSKU) error {
			return normalizeGCP([]gcpSKU{s}, nil, "fuzz", at, &cat)
		})
		if err != nil {
			return
		}
		for _, o := range cat.Offers {
			if !(o.PricePerHour > 0) || o.GPUCount != 1 {
				t.Fatalf("invalid offer accepted: %+v", o)
			}
		}
	})
}
