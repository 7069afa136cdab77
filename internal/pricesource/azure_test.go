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

func azurePage2(r *http.Request) bool { return r.URL.Query().Get("$skip") == "1000" }
func azurePage1(r *http.Request) bool { return r.URL.Query().Get("$skip") == "" }

func TestAzureRetailReplay(t *testing.T) {
	srv := newReplay(t,
		reply{match: azurePage1, body: fixture(t, "azure-retail-prices-gpu-page1.json")},
		reply{match: azurePage2, body: fixture(t, "azure-retail-prices-gpu-page2.json")},
	)
	src := &AzureRetail{Region: "eastus", Endpoint: srv.URL + "/api/retail/prices"}
	cat, err := src.Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"Standard_NC24ads_A100_v4|on_demand": 3.673,
		"Standard_NC24ads_A100_v4|spot":      0.7346,
		"Standard_NC24ads_A100_v4|reserved":  20160.0 / 8760,
		"Standard_ND96isr_H100_v5|on_demand": 98.32,
		"Standard_ND96isr_H100_v5|spot":      29.496,
		"Standard_NC6s_v3|on_demand":         3.06,
	}
	got := map[string]float64{}
	for _, o := range cat.Offers {
		got[o.InstanceType+"|"+string(o.Market)] = o.PricePerHour
		if o.ObservedAt != at || o.Region != "eastus" || o.Provider != "azure" {
			t.Errorf("offer %+v: wrong provider, region or time", o)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("offers = %v, want %v", got, want)
	}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	// Windows and Low Priority rows are excluded, not offered.
	if cat.Skipped[pricing.SkipExcluded] != 2 {
		t.Errorf("skipped = %v, want 2 excluded (Windows, Low Priority)", cat.Skipped)
	}
	if len(srv.requests) != 2 {
		t.Errorf("requests = %d, want 2 pages", len(srv.requests))
	}
	q := srv.requests[0].URL.Query().Get("$filter")
	if !strings.Contains(q, "armRegionName eq 'eastus'") || !strings.Contains(q, "'Virtual Machines'") {
		t.Errorf("filter = %q", q)
	}
}

func TestAzureRetailFailures(t *testing.T) {
	for _, tt := range failureReplies {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, tt.reply)
			_, err := (&AzureRetail{Region: "eastus", Endpoint: srv.URL}).Fetch(context.Background(), at)
			e := wantKind(t, err, tt.wantKind)
			if e.RetryAfter != tt.wantRetryAfter {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantRetryAfter)
			}
		})
	}
}

// TestAzureRetailBadPages: a bad second page or bad data fails the whole fetch.
func TestAzureRetailBadPages(t *testing.T) {
	page1 := fixture(t, "azure-retail-prices-gpu-page1.json")
	page2 := fixture(t, "azure-retail-prices-gpu-page2.json")
	setFirst := func(field string, v any) func(map[string]any) {
		return func(doc map[string]any) { doc["Items"].([]any)[0].(map[string]any)[field] = v }
	}
	tests := []struct {
		name     string
		page2    []byte
		status   int
		wantKind Kind
	}{
		{name: "second page 500", page2: []byte("oops"), status: 500, wantKind: KindServer},
		{name: "second page truncated", page2: page2[:len(page2)/2], wantKind: KindDecode},
		{name: "negative price", page2: edit(t, page2, setFirst("retailPrice", -98.32)), wantKind: KindInvalid},
		{name: "euro", page2: edit(t, page2, setFirst("currencyCode", "EUR")), wantKind: KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, reply{match: azurePage1, body: page1},
				reply{match: azurePage2, body: tt.page2, status: tt.status})
			cat, err := (&AzureRetail{Region: "eastus", Endpoint: srv.URL}).Fetch(context.Background(), at)
			wantKind(t, err, tt.wantKind)
			if len(cat.Offers) != 0 {
				t.Errorf("a failed fetch returned %d offers", len(cat.Offers))
			}
		})
	}
}

func TestAzureRetailRows(t *testing.T) {
	page2 := fixture(t, "azure-retail-prices-gpu-page2.json")
	tests := []struct {
		name        string
		edit        func(map[string]any)
		wantOffers  int
		wantUnknown string
		wantSkipped string
	}{
		{name: "zero price skipped", edit: func(d map[string]any) {
			d["Items"].([]any)[0].(map[string]any)["retailPrice"] = 0.0
		}, wantOffers: 2, wantSkipped: pricing.SkipZeroPrice},
		{name: "unknown N-series counted", edit: func(d map[string]any) {
			d["Items"].([]any)[3].(map[string]any)["armSkuName"] = "Standard_NC999_Z9_v9"
		}, wantOffers: 2, wantUnknown: "azure:Standard_NC999_Z9_v9"},
		{name: "cpu size skipped", edit: func(d map[string]any) {
			d["Items"].([]any)[3].(map[string]any)["armSkuName"] = "Standard_D14"
		}, wantOffers: 2, wantSkipped: pricing.SkipNotGPU},
		{name: "fractional A10 skipped", edit: func(d map[string]any) {
			d["Items"].([]any)[3].(map[string]any)["armSkuName"] = "Standard_NV6ads_A10_v5"
		}, wantOffers: 2, wantSkipped: pricing.SkipFractional},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, reply{body: edit(t, page2, tt.edit)})
			cat, err := (&AzureRetail{Region: "eastus", Endpoint: srv.URL}).Fetch(context.Background(), at)
			if err != nil {
				t.Fatal(err)
			}
			if len(cat.Offers) != tt.wantOffers {
				t.Errorf("offers = %d, want %d: %+v", len(cat.Offers), tt.wantOffers, cat.Offers)
			}
			if tt.wantUnknown != "" && cat.Unknown[tt.wantUnknown] != 1 {
				t.Errorf("unknown = %v, want %s", cat.Unknown, tt.wantUnknown)
			}
			if tt.wantSkipped != "" && cat.Skipped[tt.wantSkipped] != 1 {
				t.Errorf("skipped = %v, want one %s", cat.Skipped, tt.wantSkipped)
			}
		})
	}
}

// TestAzureRetailSkipFallback: a full page without NextPageLink is followed with $skip.
func TestAzureRetailSkipFallback(t *testing.T) {
	page1 := edit(t, fixture(t, "azure-retail-prices-gpu-page1.json"), func(d map[string]any) {
		d["NextPageLink"] = nil
		d["Count"] = 1000
	})
	srv := newReplay(t, reply{match: azurePage1, body: page1},
		reply{match: func(r *http.Request) bool { return r.URL.Query().Get("$skip") == "1000" },
			body: fixture(t, "azure-retail-prices-gpu-page2.json")})
	cat, err := (&AzureRetail{Region: "eastus", Endpoint: srv.URL}).Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Offers) != 6 || len(srv.requests) != 2 {
		t.Fatalf("offers = %d after %d requests, want 6 after 2", len(cat.Offers), len(srv.requests))
	}
}

func FuzzParseAzurePage(f *testing.F) {
	f.Add(fixture(f, "azure-retail-prices-gpu-page1.json"))
	f.Add(fixture(f, "azure-retail-prices-gpu-page2.json"))
	f.Add([]byte(`{"Items":[{"retailPrice":-1,"armSkuName":"Standard_NC6s_v3","type":"Consumption"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var cat pricing.Catalog
		_, err := parseAzurePage(bytes.NewReader(body), func(it azureItem) error {
			return normalizeAzure([]azureItem{it}, "eastus", "fuzz", at, &cat)
		})
		if err != nil {
			return
		}
		for _, o := range cat.Offers {
			if !(o.PricePerHour > 0) || math.IsInf(o.PricePerHour, 0) || o.GPUCount <= 0 {
				t.Fatalf("invalid offer accepted: %+v", o)
			}
		}
	})
}
