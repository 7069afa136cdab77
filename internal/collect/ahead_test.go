package collect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// TestAnOfferDatedAheadOfTheRunIsRefused (issue 27): a price observed more than events.MaxSkew
// after the run's time is not published; the error names the offer, the field and the value.
func TestAnOfferDatedAheadOfTheRunIsRefused(t *testing.T) {
	env := bustest.Start(t)
	c := New(bus.NewPublisher(env.JS), quiet(), nil)
	offer := func(at time.Time) sourceFunc {
		return sourceFunc(func(context.Context) (pricing.Catalog, error) {
			return pricing.Catalog{Offers: []pricing.Offer{{Provider: "aws", Region: "r", InstanceType: "p5",
				GPU: "H100-80GB", GPUCount: 8, Market: pricing.OnDemand, PricePerHour: 98, Source: "func", ObservedAt: at}}}, nil
		})
	}
	ahead := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := c.RunOnce(context.Background(), Job{Source: offer(ahead)}, t0, true)
	if err == nil || !strings.Contains(err.Error(), `field "at"`) || !strings.Contains(err.Error(), "2099-01-01T00:00:00Z") {
		t.Fatalf("err = %v, want the offer's at refused", err)
	}
	if n, err := c.RunOnce(context.Background(), Job{Source: offer(t0.Add(events.MaxSkew))}, t0, true); err != nil || n != 1 {
		t.Fatalf("an offer within the skew: %d published, %v", n, err)
	}
}
