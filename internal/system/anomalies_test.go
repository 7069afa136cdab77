package system_test

import (
	"context"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/system"
)

// TestAnomalyWatcherSeesTheServicesSpend checks the wiring of the cost anomaly watcher: the
// system builds it, and the spend it samples is what the service runs, priced (2 ready replicas
// at 3 USD/h), once the launches are ready. A stepped system ticks it itself: nothing is
// published while the detector learns.
func TestAnomalyWatcherSeesTheServicesSpend(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)}
	publishPrices(t, env.JS, clk.Now())
	fl := sim.New(cfg, clk.Now)
	sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: env.JS,
		Actuator: actuate.Router{"a": fl}, Clock: clk, Identity: "test", LeaseTTL: time.Second,
		Policy: placement.Policy{MaxHedge: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if sys.Anomalies == nil {
		t.Fatal("the system has no anomaly watcher")
	}
	if err := sys.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sys.Close(); err != nil {
			t.Error(err)
		}
	}()
	var usd float64
	for range 5 {
		sys.Service.Step(ctx)
		sys.Anomalies.Tick(ctx)
		clk.mu.Lock()
		clk.now = clk.now.Add(time.Minute)
		clk.mu.Unlock()
		usd = 0
		for _, b := range sys.Service.Burning() {
			usd += b.USDPerHour
		}
	}
	if usd != 6 {
		t.Fatalf("the watcher samples %.2f USD/h, want 6 (2 ready replicas at 3 USD/h): %+v", usd, sys.Service.Burning())
	}
	if n := sys.Anomalies.Unsent(); n != 0 {
		t.Fatalf("%d anomaly changes unsent while learning", n)
	}
}
