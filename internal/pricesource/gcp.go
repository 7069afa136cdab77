package pricesource

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// GCPEndpoint is the Cloud Billing Catalog skus.list URL for Compute Engine (service
// 6F81-5844-456A), where GPU SKUs live.
const GCPEndpoint = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"

// GCPBilling reads GPU prices from the Cloud Billing Catalog API. GPU SKUs price one GPU alone:
// the offers it returns are per accelerator (instance type "nvidia-h100-80gb:1") and marked
// GPUOnly, since the host VM's cores and memory are billed as separate SKUs.
type GCPBilling struct {
	APIKey   Secret
	Regions  []string // fan out only to these; all service regions when empty
	Endpoint string   // defaults to GCPEndpoint
	HTTP     *http.Client
	Limits   Limits // per request: header and idle timeouts, body cap
	MaxPages int    // defaults to 100
}

// Name identifies the source in metrics and events.
func (g *GCPBilling) Name() string { return "gcp-billing" }

// Fetch walks every page of SKUs and keeps the GPU ones. A nextPageToken already followed
// fails the fetch as a cycle.
func (g *GCPBilling) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	c := client{source: g.Name(), http: g.HTTP, limits: g.Limits, secrets: []Secret{g.APIKey}}
	endpoint := g.Endpoint
	if endpoint == "" {
		endpoint = GCPEndpoint
	}
	base, err := url.Parse(endpoint)
	if err != nil {
		return pricing.Catalog{}, fmt.Errorf("gcp endpoint %q: %w", endpoint, err)
	}
	maxPages := g.MaxPages
	if maxPages <= 0 {
		maxPages = 100
	}
	var cat pricing.Catalog
	token := ""
	tokens := map[string]int{} // token -> the page it was followed to
	for n := 1; ; n++ {
		if n > maxPages {
			return pricing.Catalog{}, c.decodeError(redactURL(base), fmt.Errorf("more than %d pages; stopping", maxPages))
		}
		next, err := g.page(ctx, c, *base, token, at, &cat)
		if err != nil {
			return pricing.Catalog{}, fmt.Errorf("reading gcp skus page %d: %w", n, err)
		}
		if next == "" {
			break
		}
		if first, ok := tokens[next]; ok {
			return pricing.Catalog{}, &Error{Source: g.Name(), Where: redactURL(base), Kind: KindAPI,
				Err: fmt.Errorf("%w: page %d's nextPageToken %q was already followed to page %d", ErrPageCycle, n, short(next), first)}
		}
		tokens[next] = n + 1
		token = next
	}
	cat.Sort()
	return cat, nil
}

// page reads one page, normalizing its SKUs into cat as they stream in, and returns the next
// page's token.
func (g *GCPBilling) page(ctx context.Context, c client, u url.URL, token string, at time.Time, cat *pricing.Catalog) (string, error) {
	q := u.Query()
	q.Set("currencyCode", "USD")
	q.Set("pageSize", "5000")
	if g.APIKey != "" {
		q.Set("key", g.APIKey.Reveal())
	}
	if token != "" {
		q.Set("pageToken", token)
	}
	u.RawQuery = q.Encode()
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	var next string
	var skuErr error
	err := c.stream(ctx, req, func(r io.Reader) error {
		var err error
		next, err = parseGCPPage(r, func(s gcpSKU) error {
			skuErr = normalizeGCP([]gcpSKU{s}, g.Regions, g.Name(), at, cat)
			return skuErr
		})
		return err
	})
	if skuErr != nil {
		return "", c.invalid(redactURL(&u), skuErr)
	}
	return next, err
}

type gcpSKU struct {
	SkuID       string `json:"skuId"`
	Description string `json:"description"`
	Category    struct {
		ResourceFamily string `json:"resourceFamily"`
		ResourceGroup  string `json:"resourceGroup"`
		UsageType      string `json:"usageType"`
	} `json:"category"`
	ServiceRegions []string `json:"serviceRegions"`
	PricingInfo    []struct {
		PricingExpression struct {
			UsageUnit   string `json:"usageUnit"`
			TieredRates []struct {
				StartUsageAmount float64  `json:"startUsageAmount"`
				UnitPrice        gcpMoney `json:"unitPrice"`
			} `json:"tieredRates"`
		} `json:"pricingExpression"`
		EffectiveTime string `json:"effectiveTime"`
	} `json:"pricingInfo"`
}

type gcpMoney struct {
	CurrencyCode string `json:"currencyCode"`
	Units        string `json:"units"`
	Nanos        int64  `json:"nanos"`
}

// gcpShape is what a skus.list page must look like, for decode errors.
const gcpShape = "a skus.list page (a JSON object with a skus array)"

// parseGCPPage decodes one skus.list page from r, handing each SKU to sku as it is read, and
// returns the next page's token. A body of any other shape is an error naming what was
// expected and what came.
func parseGCPPage(r io.Reader, sku func(gcpSKU) error) (string, error) {
	var next string
	dec := json.NewDecoder(r)
	seen, err := walkObject(dec, gcpShape, jsonFields{
		"nextPageToken": readString(&next),
		"skus": func(dec *json.Decoder) error {
			_, err := walkArray(dec, func(_ int, dec *json.Decoder) error {
				var s gcpSKU
				if err := dec.Decode(&s); err != nil {
					return err
				}
				return sku(s)
			})
			return err
		},
	})
	if err != nil {
		return "", err
	}
	if !seen["skus"] {
		return "", missing(gcpShape, seen)
	}
	return next, nil
}

// short is a token cut to a length fit for a message.
func short(token string) string {
	if len(token) > 40 {
		return token[:40] + "..."
	}
	return token
}

// value is units + nanos/1e9. Both carry the sign; nanos must stay within one unit.
func (m gcpMoney) value() (float64, error) {
	units := int64(0)
	if m.Units != "" {
		u, err := strconv.ParseInt(m.Units, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("units %q: %w", m.Units, err)
		}
		units = u
	}
	if m.Nanos <= -1e9 || m.Nanos >= 1e9 {
		return 0, fmt.Errorf("nanos %d out of range", m.Nanos)
	}
	return float64(units) + float64(m.Nanos)/1e9, nil
}

var gcpMarkets = map[string]pricing.Market{
	"OnDemand": pricing.OnDemand, "Preemptible": pricing.Spot, "Commit1Yr": pricing.Reserved,
}

// normalizeGCP turns GPU SKUs into one per-GPU offer per service region.
func normalizeGCP(skus []gcpSKU, regions []string, source string, at time.Time, cat *pricing.Catalog) error {
	for _, s := range skus {
		if s.Category.ResourceFamily != "Compute" || s.Category.ResourceGroup != "GPU" {
			cat.Skip(pricing.SkipNotGPU)
			continue
		}
		market, ok := gcpMarkets[s.Category.UsageType]
		accel, gpu, excluded, known := pricing.GCPDescription(s.Description)
		switch {
		case !ok || excluded:
			cat.Skip(pricing.SkipExcluded)
			continue
		case !known:
			cat.UnknownGPU("gcp", modelPart(s.Description))
			continue
		}
		price, currency, err := gcpHourly(s)
		if err != nil {
			return fmt.Errorf("sku %s: %w", s.SkuID, err)
		}
		for _, region := range s.ServiceRegions {
			if len(regions) > 0 && !contains(regions, region) {
				continue
			}
			o := pricing.Offer{Provider: "gcp", Region: region, InstanceType: accel + ":1", GPU: gpu.Name,
				GPUCount: 1, GPUMemoryGB: gpu.MemoryGB, Market: market, PricePerHour: price,
				Source: source, ObservedAt: at, GPUOnly: true}
			if err := cat.Add(o, currency); err != nil {
				return fmt.Errorf("sku %s: %w", s.SkuID, err)
			}
		}
	}
	return nil
}

// gcpHourly is the first-tier hourly price of the SKU's current pricing.
func gcpHourly(s gcpSKU) (float64, string, error) {
	if len(s.PricingInfo) == 0 {
		return 0, "", fmt.Errorf("no pricingInfo")
	}
	expr := s.PricingInfo[0].PricingExpression
	if expr.UsageUnit != "h" {
		return 0, "", fmt.Errorf("usage unit %q, want h", expr.UsageUnit)
	}
	for _, r := range expr.TieredRates {
		if r.StartUsageAmount == 0 {
			v, err := r.UnitPrice.value()
			return v, r.UnitPrice.CurrencyCode, err
		}
	}
	return 0, "", fmt.Errorf("no tier starting at 0")
}

// modelPart is a description without its " running in <place>" suffix, for unknown-GPU counts.
func modelPart(desc string) string {
	if i := strings.Index(desc, " running in "); i >= 0 {
		return desc[:i]
	}
	return desc
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
