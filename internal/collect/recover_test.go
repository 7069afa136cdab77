package collect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// panicSource is a source whose parser has a bug: every fetch panics.
type panicSource struct{}

func (panicSource) Name() string { return "panics" }
func (panicSource) Fetch(context.Context, time.Time) (pricing.Catalog, error) {
	var rows []string
	_ = rows[3] // index out of range, as FieldPos once did
	return pricing.Catalog{}, nil
}

// TestPanickingSourceFailsAloneNotTheCollector: a source that panics is an error for that
// source's run (counted, not retried); the collector goes on and the next source still runs.
func TestPanickingSourceFailsAloneNotTheCollector(t *testing.T) {
	env := bustest.Start(t)
	c := New(bus.NewPublisher(env.JS), quiet(), nil)
	ctx := context.Background()
	_, err := c.RunOnce(ctx, Job{Source: panicSource{}, Retries: 3, StaleAfter: 1}, t0, true)
	if err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "panics") {
		t.Fatalf("err = %v, want one saying source panics panicked", err)
	}
	if !c.Stale("panics") {
		t.Error("a source that panics is not counted as failing")
	}
	good := sourceFunc(func(context.Context) (pricing.Catalog, error) {
		return pricing.Catalog{Offers: []pricing.Offer{{Provider: "aws", Region: "r", InstanceType: "p5",
			GPU: "H100-80GB", GPUCount: 8, Market: pricing.OnDemand, PricePerHour: 98, Source: "func", ObservedAt: t0}}}, nil
	})
	if _, err := c.RunOnce(ctx, Job{Source: good}, t0, true); err != nil {
		t.Fatalf("the next source after a panic: %v", err)
	}
}
