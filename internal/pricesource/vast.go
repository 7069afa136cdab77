package pricesource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// Vast searches Vast.ai offers. Each machine offer gives an on-demand price (dph_total, all its
// GPUs) and, where bids are open, a spot price (min_bid). The region is the offer's country.
type Vast struct {
	APIKey   Secret
	Endpoint string
	HTTP     *http.Client
	Limit    int // offers per search; defaults to 500
}

// Name identifies the source in metrics and events.
func (v *Vast) Name() string { return "vast" }

// Fetch runs one on-demand search of verified, rentable offers.
func (v *Vast) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	c := client{source: v.Name(), http: v.HTTP, secrets: []Secret{v.APIKey}}
	limit := v.Limit
	if limit <= 0 {
		limit = 500
	}
	query := map[string]any{
		"verified": map[string]any{"eq": true}, "external": map[string]any{"eq": false},
		"rentable": map[string]any{"eq": true}, "rented": map[string]any{"eq": false},
		"num_gpus": map[string]any{"gte": 1}, "order": [][]string{{"dph_total", "asc"}},
		"type": "on-demand", "limit": limit,
	}
	payload, _ := json.Marshal(query)
	req, err := http.NewRequest(http.MethodPost, orDefault(v.Endpoint, VastEndpoint), bytes.NewReader(payload))
	if err != nil {
		return pricing.Catalog{}, fmt.Errorf("vast endpoint: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if v.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+v.APIKey.Reveal())
	}
	body, err := c.do(ctx, req)
	if err != nil {
		return pricing.Catalog{}, err
	}
	offers, err := parseVast(body)
	if err != nil {
		return pricing.Catalog{}, c.decodeError(redactURL(req.URL), err)
	}
	var cat pricing.Catalog
	if err := normalizeVast(offers, v.Name(), at, &cat); err != nil {
		return pricing.Catalog{}, c.invalid(redactURL(req.URL), err)
	}
	cat.Sort()
	return cat, nil
}

type vastOffer struct {
	ID          int64    `json:"id"`
	MachineID   int64    `json:"machine_id"`
	GPUName     string   `json:"gpu_name"`
	NumGPUs     float64  `json:"num_gpus"`
	GPURAM      float64  `json:"gpu_ram"` // MB per GPU
	DPHTotal    *float64 `json:"dph_total"`
	MinBid      *float64 `json:"min_bid"`
	Geolocation string   `json:"geolocation"`
}

func parseVast(body []byte) ([]vastOffer, error) {
	var doc struct {
		Offers []vastOffer `json:"offers"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	if doc.Offers == nil {
		return nil, fmt.Errorf("no offers array in the response")
	}
	return doc.Offers, nil
}

func normalizeVast(offers []vastOffer, source string, at time.Time, cat *pricing.Catalog) error {
	for _, v := range offers {
		gpu, ok := pricing.VastGPU(v.GPUName, v.GPURAM)
		if !ok {
			cat.UnknownGPU("vast", v.GPUName)
			continue
		}
		n := int(v.NumGPUs)
		if float64(n) != v.NumGPUs || n <= 0 {
			cat.Skip(pricing.SkipFractional)
			continue
		}
		base := pricing.Offer{Provider: "vast", Region: vastRegion(v.Geolocation), Zone: v.Geolocation,
			InstanceType: fmt.Sprintf("%dx %s m%d", n, gpu.Name, v.MachineID), GPU: gpu.Name,
			GPUCount: n, GPUMemoryGB: gpu.MemoryGB, Source: source, ObservedAt: at}
		for _, p := range []struct {
			market pricing.Market
			price  *float64
		}{{pricing.OnDemand, v.DPHTotal}, {pricing.Spot, v.MinBid}} {
			if p.price == nil {
				continue
			}
			o := base
			o.Market, o.PricePerHour = p.market, *p.price
			if err := cat.AddFrom(o, "USD", fmt.Sprintf("offer %d", v.ID)); err != nil {
				return fmt.Errorf("offer %d: %w", v.ID, err)
			}
		}
	}
	return nil
}

// vastRegion is the country code that ends a Vast geolocation ("Texas, US" gives "US").
func vastRegion(geo string) string {
	i := strings.LastIndex(geo, ",")
	cc := strings.TrimSpace(geo[i+1:])
	if cc == "" {
		return "unknown"
	}
	return cc
}
