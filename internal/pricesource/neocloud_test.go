package pricesource

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

const neoTestKey = "secret-neocloud-key-0123456789"

// fetcher is what every source offers; declared here, where the tests use it.
type fetcher interface {
	Name() string
	Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error)
}

func neoclouds(url string) map[string]fetcher {
	return map[string]fetcher{
		"lambda": &Lambda{APIKey: neoTestKey, Endpoint: url},
		"runpod": &RunPod{APIKey: neoTestKey, Endpoint: url},
		"vast":   &Vast{APIKey: neoTestKey, Endpoint: url},
	}
}

func TestNeocloudReplay(t *testing.T) {
	tests := []struct {
		name       string
		fixture    string
		wantOffers map[string]float64 // key → USD per instance-hour
		wantSkip   map[string]int
	}{
		{name: "lambda", fixture: "lambda-instance-types.json", wantOffers: map[string]float64{
			"lambda|us-west-1||gpu_1x_a10|on_demand|A10|1":              0.75,
			"lambda|us-east-1||gpu_1x_h100_pcie|on_demand|H100-80GB|1":  2.49,
			"lambda|us-south-1||gpu_1x_h100_pcie|on_demand|H100-80GB|1": 2.49,
			"lambda|us-east-1||gpu_8x_h100_sxm5|on_demand|H100-80GB|8":  23.92,
		}, wantSkip: map[string]int{SkipNoCapacity: 1}},
		{name: "runpod", fixture: "runpod-graphql-gputypes.json", wantOffers: map[string]float64{
			"runpod|global|secure|NVIDIA H100 80GB HBM3|on_demand|H100-80GB|1":    2.99,
			"runpod|global|secure|NVIDIA H100 80GB HBM3|spot|H100-80GB|1":         1.75,
			"runpod|global|community|NVIDIA H100 80GB HBM3|on_demand|H100-80GB|1": 2.69,
			"runpod|global|community|NVIDIA H100 80GB HBM3|spot|H100-80GB|1":      1.49,
			"runpod|global|secure|NVIDIA A100-SXM4-80GB|on_demand|A100-80GB|1":    1.49,
			"runpod|global|secure|NVIDIA A100-SXM4-80GB|spot|A100-80GB|1":         0.89,
			"runpod|global|secure|NVIDIA L4|on_demand|L4|1":                       0.44,
			"runpod|global|secure|NVIDIA L4|spot|L4|1":                            0.27,
			"runpod|global|community|NVIDIA L4|on_demand|L4|1":                    0.34,
			"runpod|global|community|NVIDIA L4|spot|L4|1":                         0.18,
			"runpod|global|secure|NVIDIA H200|on_demand|H200-141GB|1":             3.99,
		}},
		{name: "vast", fixture: "vast-bundles-offers.json", wantOffers: map[string]float64{
			"vast|US|Texas, US|8x H100-80GB m18301|on_demand|H100-80GB|8": 15.2106,
			"vast|US|Texas, US|8x H100-80GB m18301|spot|H100-80GB|8":      9.6,
			"vast|SE|Sweden, SE|1x RTX4090 m7735|on_demand|RTX4090|1":     0.3307,
			"vast|SE|Sweden, SE|1x RTX4090 m7735|spot|RTX4090|1":          0.18,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, reply{body: fixture(t, tt.fixture)})
			cat, err := neoclouds(srv.URL)[tt.name].Fetch(context.Background(), at)
			if err != nil {
				t.Fatal(err)
			}
			if len(cat.Offers) != len(tt.wantOffers) {
				t.Errorf("offers = %d, want %d", len(cat.Offers), len(tt.wantOffers))
			}
			for _, o := range cat.Offers {
				want, ok := tt.wantOffers[o.Key()]
				if !ok || math.Abs(o.PricePerHour-want) > 1e-9 {
					t.Errorf("offer %s at %v; want present at %v", o.Key(), o.PricePerHour, want)
				}
			}
			for reason, n := range tt.wantSkip {
				if cat.Skipped[reason] != n {
					t.Errorf("skipped[%s] = %d, want %d", reason, cat.Skipped[reason], n)
				}
			}
			checkAuth(t, tt.name, srv.requests[0], srv.bodies[0])
		})
	}
}

func checkAuth(t *testing.T, name string, r *http.Request, body []byte) {
	t.Helper()
	switch name {
	case "lambda", "vast":
		if got := r.Header.Get("Authorization"); got != "Bearer "+neoTestKey {
			t.Errorf("Authorization = %q", got)
		}
	case "runpod":
		if r.URL.Query().Get("api_key") != neoTestKey || !strings.Contains(string(body), "gpuTypes") {
			t.Errorf("runpod request %s %s lacks key or query", r.URL, body)
		}
	}
}

func TestNeocloudFailures(t *testing.T) {
	failures := append([]struct {
		name           string
		reply          reply
		wantKind       Kind
		wantRetryAfter time.Duration
	}{}, failureReplies...)
	for _, name := range []string{"lambda", "runpod", "vast"} {
		for _, tt := range failures {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				srv := newReplay(t, tt.reply)
				_, err := neoclouds(srv.URL)[name].Fetch(context.Background(), at)
				e := wantKind(t, err, tt.wantKind)
				if e.RetryAfter != tt.wantRetryAfter {
					t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantRetryAfter)
				}
				if strings.Contains(err.Error(), neoTestKey) {
					t.Errorf("error leaks the key: %v", err)
				}
			})
		}
	}
}

func TestNeocloudBadBodies(t *testing.T) {
	lambda := fixture(t, "lambda-instance-types.json")
	runpod := fixture(t, "runpod-graphql-gputypes.json")
	vast := fixture(t, "vast-bundles-offers.json")
	lambdaType := func(f func(it map[string]any)) []byte {
		return edit(t, lambda, func(d map[string]any) {
			f(d["data"].(map[string]any)["gpu_8x_h100_sxm5"].(map[string]any)["instance_type"].(map[string]any))
		})
	}
	runpodType := func(f func(g map[string]any)) []byte {
		return edit(t, runpod, func(d map[string]any) { f(d["data"].(map[string]any)["gpuTypes"].([]any)[0].(map[string]any)) })
	}
	vastOffer := func(f func(o map[string]any)) []byte {
		return edit(t, vast, func(d map[string]any) { f(d["offers"].([]any)[0].(map[string]any)) })
	}
	tests := []struct {
		name        string
		source      string
		body        []byte
		status      int
		wantKind    Kind
		wantUnknown string
		wantZero    int
	}{
		{name: "lambda invalid key", source: "lambda", body: fixture(t, "lambda-error-invalid-key.json"), status: 401, wantKind: KindAuth},
		{name: "lambda truncated", source: "lambda", body: lambda[:len(lambda)/3], wantKind: KindDecode},
		{name: "lambda negative", source: "lambda", body: lambdaType(func(it map[string]any) { it["price_cents_per_hour"] = -5 }), wantKind: KindInvalid},
		{name: "lambda zero", source: "lambda", body: lambdaType(func(it map[string]any) { it["price_cents_per_hour"] = 0 }), wantZero: 1},
		{name: "lambda unknown gpu", source: "lambda", body: lambdaType(func(it map[string]any) { it["gpu_description"] = "Z9 (7 GB)" }), wantUnknown: "lambda:Z9 (7 GB)"},
		{name: "runpod graphql error", source: "runpod", body: fixture(t, "runpod-graphql-error.json"), wantKind: KindAPI},
		{name: "runpod truncated", source: "runpod", body: runpod[:len(runpod)-10], wantKind: KindDecode},
		{name: "runpod negative", source: "runpod", body: runpodType(func(g map[string]any) { g["securePrice"] = -2.99 }), wantKind: KindInvalid},
		{name: "runpod zero", source: "runpod", body: runpodType(func(g map[string]any) { g["securePrice"] = 0 }), wantZero: 1},
		{name: "runpod unknown gpu", source: "runpod", body: runpodType(func(g map[string]any) { g["id"] = "NVIDIA Z9" }), wantUnknown: "runpod:NVIDIA Z9"},
		{name: "vast truncated", source: "vast", body: vast[:100], wantKind: KindDecode},
		{name: "vast negative", source: "vast", body: vastOffer(func(o map[string]any) { o["dph_total"] = -1 }), wantKind: KindInvalid},
		{name: "vast zero", source: "vast", body: vastOffer(func(o map[string]any) { o["min_bid"] = 0 }), wantZero: 1},
		{name: "vast unknown gpu", source: "vast", body: vastOffer(func(o map[string]any) { o["gpu_name"] = "Z9 Ultra" }), wantUnknown: "vast:Z9 Ultra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, reply{body: tt.body, status: tt.status})
			cat, err := neoclouds(srv.URL)[tt.source].Fetch(context.Background(), at)
			if tt.wantKind != "" {
				wantKind(t, err, tt.wantKind)
				if strings.Contains(err.Error(), neoTestKey) {
					t.Errorf("error leaks the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cat.Skipped[pricing.SkipZeroPrice] != tt.wantZero {
				t.Errorf("zero-price skips = %d, want %d", cat.Skipped[pricing.SkipZeroPrice], tt.wantZero)
			}
			if tt.wantUnknown != "" && cat.Unknown[tt.wantUnknown] == 0 {
				t.Errorf("unknown = %v, want %s", cat.Unknown, tt.wantUnknown)
			}
		})
	}
}

func FuzzParseLambda(f *testing.F) {
	f.Add(fixture(f, "lambda-instance-types.json"))
	f.Fuzz(func(t *testing.T, body []byte) {
		types, err := parseLambda(body)
		if err != nil {
			return
		}
		var cat pricing.Catalog
		_ = normalizeLambda(types, "fuzz", at, &cat)
		assertValid(t, cat)
	})
}

func FuzzParseRunPod(f *testing.F) {
	f.Add(fixture(f, "runpod-graphql-gputypes.json"))
	f.Add(fixture(f, "runpod-graphql-error.json"))
	f.Fuzz(func(t *testing.T, body []byte) {
		types, _, err := parseRunPod(body)
		if err != nil {
			return
		}
		var cat pricing.Catalog
		_ = normalizeRunPod(types, "fuzz", at, &cat)
		assertValid(t, cat)
	})
}

func FuzzParseVast(f *testing.F) {
	f.Add(fixture(f, "vast-bundles-offers.json"))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, err := parseVast(body)
		if err != nil {
			return
		}
		var cat pricing.Catalog
		_ = normalizeVast(offers, "fuzz", at, &cat)
		assertValid(t, cat)
	})
}

// assertValid fails on any offer a catalog should never hold.
func assertValid(t *testing.T, cat pricing.Catalog) {
	t.Helper()
	for _, o := range cat.Offers {
		if !(o.PricePerHour > 0) || math.IsInf(o.PricePerHour, 0) || o.GPUCount <= 0 || o.GPU == "" || o.Region == "" {
			t.Fatalf("invalid offer accepted: %+v", o)
		}
	}
}
