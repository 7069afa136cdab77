package pricesource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// Public endpoints of the neocloud APIs.
const (
	LambdaEndpoint = "https://cloud.lambda.ai/api/v1/instance-types"
	RunPodEndpoint = "https://api.runpod.io/graphql"
	VastEndpoint   = "https://console.vast.ai/api/v0/bundles/"
)

// Lambda reads instance types and prices from Lambda Cloud. Only regions with capacity are
// offered: a sold-out type is not something the planner can buy.
type Lambda struct {
	APIKey   Secret
	Endpoint string
	HTTP     *http.Client
}

// Name identifies the source in metrics and events.
func (l *Lambda) Name() string { return "lambda" }

// Fetch reads the instance types.
func (l *Lambda) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	c := client{source: l.Name(), http: l.HTTP, secrets: []Secret{l.APIKey}}
	req, err := http.NewRequest(http.MethodGet, orDefault(l.Endpoint, LambdaEndpoint), nil)
	if err != nil {
		return pricing.Catalog{}, fmt.Errorf("lambda endpoint: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+l.APIKey.Reveal())
	body, err := c.do(ctx, req)
	if err != nil {
		return pricing.Catalog{}, err
	}
	types, err := parseLambda(body)
	if err != nil {
		return pricing.Catalog{}, c.decodeError(redactURL(req.URL), err)
	}
	var cat pricing.Catalog
	if err := normalizeLambda(types, l.Name(), at, &cat); err != nil {
		return pricing.Catalog{}, c.invalid(redactURL(req.URL), err)
	}
	cat.Sort()
	return cat, nil
}

type lambdaType struct {
	InstanceType struct {
		Name              string  `json:"name"`
		GPUDescription    string  `json:"gpu_description"`
		PriceCentsPerHour float64 `json:"price_cents_per_hour"`
		Specs             struct {
			GPUs int `json:"gpus"`
		} `json:"specs"`
	} `json:"instance_type"`
	Regions []struct {
		Name string `json:"name"`
	} `json:"regions_with_capacity_available"`
}

func parseLambda(body []byte) (map[string]lambdaType, error) {
	var doc struct {
		Data map[string]lambdaType `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	if doc.Data == nil {
		return nil, fmt.Errorf("no data object in the response")
	}
	return doc.Data, nil
}

// SkipNoCapacity counts Lambda types listed with no region that has capacity.
const SkipNoCapacity = "no_capacity"

func normalizeLambda(types map[string]lambdaType, source string, at time.Time, cat *pricing.Catalog) error {
	for key, t := range types {
		it := t.InstanceType
		gpu, ok := pricing.LambdaGPU(it.GPUDescription)
		switch {
		case it.Specs.GPUs <= 0:
			cat.Skip(pricing.SkipNotGPU)
			continue
		case !ok:
			cat.UnknownGPU("lambda", it.GPUDescription)
			continue
		case len(t.Regions) == 0:
			cat.Skip(SkipNoCapacity)
			continue
		}
		name := orDefault(it.Name, key)
		for _, r := range t.Regions {
			o := pricing.Offer{Provider: "lambda", Region: r.Name, InstanceType: name, GPU: gpu.Name,
				GPUCount: it.Specs.GPUs, GPUMemoryGB: gpu.MemoryGB, Market: pricing.OnDemand,
				PricePerHour: it.PriceCentsPerHour / 100, Source: source, ObservedAt: at}
			if err := cat.AddFrom(o, "USD", "instance type "+key); err != nil {
				return err
			}
		}
	}
	return nil
}

// RunPod reads per-GPU prices from RunPod's GraphQL gpuTypes query. Each GPU type becomes up to
// four one-GPU offers: secure and community cloud (the zone), on-demand and spot.
type RunPod struct {
	APIKey   Secret
	Endpoint string
	HTTP     *http.Client
}

// Name identifies the source in metrics and events.
func (r *RunPod) Name() string { return "runpod" }

const runpodQuery = `query GpuTypes { gpuTypes { id displayName memoryInGb secureCloud communityCloud
 securePrice communityPrice secureSpotPrice communitySpotPrice } }`

// Fetch runs the gpuTypes query. The key goes in the api_key query parameter, as RunPod's
// own SDK sends it; errors print the URL without it.
func (r *RunPod) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	c := client{source: r.Name(), http: r.HTTP, secrets: []Secret{r.APIKey}}
	u, err := url.Parse(orDefault(r.Endpoint, RunPodEndpoint))
	if err != nil {
		return pricing.Catalog{}, fmt.Errorf("runpod endpoint: %w", err)
	}
	q := u.Query()
	q.Set("api_key", r.APIKey.Reveal())
	u.RawQuery = q.Encode()
	payload, _ := json.Marshal(map[string]string{"query": runpodQuery})
	req, _ := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	body, err := c.do(ctx, req)
	if err != nil {
		return pricing.Catalog{}, err
	}
	types, apiErr, err := parseRunPod(body)
	if err != nil {
		return pricing.Catalog{}, c.decodeError(redactURL(u), err)
	}
	if apiErr != "" {
		return pricing.Catalog{}, &Error{Source: r.Name(), Where: redactURL(u), Kind: KindAPI,
			Err: c.scrub(fmt.Errorf("graphql error: %s", apiErr))}
	}
	var cat pricing.Catalog
	if err := normalizeRunPod(types, r.Name(), at, &cat); err != nil {
		return pricing.Catalog{}, c.invalid(redactURL(u), err)
	}
	cat.Sort()
	return cat, nil
}

type runpodType struct {
	ID                 string   `json:"id"`
	MemoryInGb         float64  `json:"memoryInGb"`
	SecureCloud        bool     `json:"secureCloud"`
	CommunityCloud     bool     `json:"communityCloud"`
	SecurePrice        *float64 `json:"securePrice"`
	CommunityPrice     *float64 `json:"communityPrice"`
	SecureSpotPrice    *float64 `json:"secureSpotPrice"`
	CommunitySpotPrice *float64 `json:"communitySpotPrice"`
}

// parseRunPod decodes the GraphQL response; a GraphQL error (which arrives with HTTP 200) is
// returned as its first message.
func parseRunPod(body []byte) ([]runpodType, string, error) {
	var doc struct {
		Data *struct {
			GpuTypes []runpodType `json:"gpuTypes"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, "", err
	}
	if len(doc.Errors) > 0 {
		return nil, doc.Errors[0].Message, nil
	}
	if doc.Data == nil || doc.Data.GpuTypes == nil {
		return nil, "", fmt.Errorf("no data.gpuTypes in the response")
	}
	return doc.Data.GpuTypes, "", nil
}

func normalizeRunPod(types []runpodType, source string, at time.Time, cat *pricing.Catalog) error {
	for _, t := range types {
		gpu, ok := pricing.RunPodGPU(t.ID)
		if !ok {
			cat.UnknownGPU("runpod", t.ID)
			continue
		}
		prices := []struct {
			zone    string
			market  pricing.Market
			offered bool
			price   *float64
		}{
			{"secure", pricing.OnDemand, t.SecureCloud, t.SecurePrice},
			{"secure", pricing.Spot, t.SecureCloud, t.SecureSpotPrice},
			{"community", pricing.OnDemand, t.CommunityCloud, t.CommunityPrice},
			{"community", pricing.Spot, t.CommunityCloud, t.CommunitySpotPrice},
		}
		for _, p := range prices {
			if !p.offered || p.price == nil {
				continue
			}
			o := pricing.Offer{Provider: "runpod", Region: "global", Zone: p.zone, InstanceType: t.ID,
				GPU: gpu.Name, GPUCount: 1, GPUMemoryGB: gpu.MemoryGB, Market: p.market,
				PricePerHour: *p.price, Source: source, ObservedAt: at}
			if err := cat.AddFrom(o, "USD", "gpu type "+t.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
