package arbiter

import (
	"reflect"
	"testing"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// TestBurningPricesWhatRunsLikeTheBudgets: each reported group costs its ready replicas at its
// offer's price, with the GPUs they hold; an offer with no price seen costs nothing, and a group
// with nothing ready is there at 0.
func TestBurningPricesWhatRunsLikeTheBudgets(t *testing.T) {
	cfg := &fleet.Config{Locations: []fleet.Location{{Name: "aws-use1", Provider: "aws", Region: "us-east-1"}},
		Workloads: []fleet.Workload{{Name: "llm", Team: "search"}, {Name: "emb"}}}
	m := newMarket(cfg)
	spot := &events.PriceObserved{Provider: "aws", Region: "us-east-1", Zone: "us-east-1a", InstanceType: "p5.48xlarge",
		GPUModel: "H100-80GB", GPUCount: 8, Market: events.Spot, USDPerHour: 30}
	m.price(spot)
	offer := offerID(spot, "aws-use1")
	m.observe([]actuate.Observed{
		{Group: actuate.Group{Workload: "llm", Location: "aws-use1", Market: events.Spot}, Offer: offer, Ready: 3},
		{Group: actuate.Group{Workload: "emb", Location: "aws-use1", Market: events.OnDemand}, Offer: "aws-use1/-/unpriced/on_demand", Ready: 2},
		{Group: actuate.Group{Workload: "llm", Location: "aws-use1", Market: events.OnDemand}, Offer: offer, Ready: 0},
	}, t0)
	want := []Burn{
		{Workload: "emb", Provider: "aws", Location: "aws-use1", Market: "on_demand", Offer: "aws-use1/-/unpriced/on_demand", Ready: 2},
		{Workload: "llm", Team: "search", Provider: "aws", Location: "aws-use1", Market: "on_demand", Offer: offer, GPUModel: "H100-80GB"},
		{Workload: "llm", Team: "search", Provider: "aws", Location: "aws-use1", Market: "spot", Offer: offer, GPUModel: "H100-80GB",
			Ready: 3, GPUs: 24, USDPerHour: 90},
	}
	if got := m.burning(); !reflect.DeepEqual(got, want) {
		t.Fatalf("burning:\n%+v\nwant\n%+v", got, want)
	}
}
