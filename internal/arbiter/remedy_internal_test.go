package arbiter

import (
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

func TestSpotOfferPicksTheCheapestAvailableFit(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	cfg := &fleet.Config{Locations: []fleet.Location{{Name: "eu", Residency: []string{"eu"}}, {Name: "us"}}}
	svc := fleet.Workload{Name: "svc", GPU: fleet.GPU{Models: []string{"H100-80GB"}, Count: 1}}
	offer := func(id, loc string, m placement.Market, usd float64) placement.Offer {
		return placement.Offer{ID: id, Location: loc, GPUModel: "H100-80GB", GPUCount: 1, Market: m, PricePerHour: usd}
	}
	failed := func(o placement.Offer, ago time.Duration) placement.Offer {
		o.History = []placement.Observation{{At: now.Add(-ago), Kind: placement.ObsLaunchFailed}}
		return o
	}
	tests := []struct {
		name   string
		w      fleet.Workload
		offers []placement.Offer
		want   string // "": none
	}{
		{"cheapest spot", svc, []placement.Offer{offer("a", "us", placement.MarketSpot, 2), offer("b", "us", placement.MarketSpot, 1)}, "b"},
		{"on-demand is not spot", svc, []placement.Offer{offer("od", "us", placement.MarketOnDemand, 0.5)}, ""},
		{"another GPU model", svc, []placement.Offer{func() placement.Offer { o := offer("a", "us", placement.MarketSpot, 1); o.GPUModel = "A10G"; return o }()}, ""},
		{"too few GPUs", fleet.Workload{GPU: fleet.GPU{Count: 2}}, []placement.Offer{offer("a", "us", placement.MarketSpot, 1)}, ""},
		{"capacity hint below the replicas", svc, []placement.Offer{func() placement.Offer { o := offer("a", "us", placement.MarketSpot, 1); o.Capacity = 1; return o }()}, ""},
		{"a launch failed lately", svc, []placement.Offer{failed(offer("a", "us", placement.MarketSpot, 1), 10*time.Minute), offer("b", "us", placement.MarketSpot, 3)}, "b"},
		{"a launch failed long ago", svc, []placement.Offer{failed(offer("a", "us", placement.MarketSpot, 1), 2*time.Hour)}, "a"},
		{"residency", fleet.Workload{GPU: svc.GPU, Residency: []string{"eu"}},
			[]placement.Offer{offer("a", "us", placement.MarketSpot, 1), offer("b", "eu", placement.MarketSpot, 2)}, "b"},
		{"workload without spot", fleet.Workload{GPU: svc.GPU, Markets: []events.Market{events.OnDemand}},
			[]placement.Offer{offer("a", "us", placement.MarketSpot, 1)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := spotOffer(cfg, &tt.w, tt.offers, 2, now)
			if (tt.want != "") != ok || (ok && got.ID != tt.want) {
				t.Errorf("spotOffer = %q (found %v), want %q", got.ID, ok, tt.want)
			}
		})
	}
}
