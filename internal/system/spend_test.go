package system_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/system"
)

// TestSpendGauges: the system exports what runs now per workload, location and market, and each
// budget's spend, forecast, limit and burn, from the replica states on the bus.
func TestSpendGauges(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)}
	putPolicy(t, env, "name: svc-day\nscope: workload=svc\nperiod: day\nlimit: 100\ncurrency: USD\nthresholds:\n  - {at: 90}\n", clk.Now())
	pub := bus.NewPublisher(env.JS)
	for _, rs := range []*events.ReplicaState{ // an hour ago: 2 spot at 3/h and 1 on demand at 5/h
		{Location: "a", Provider: "aws", Market: events.Spot, Offer: "test-spot", USDPerHour: 3, Ready: 2, Desired: 2},
		{Location: "a", Provider: "aws", Market: events.OnDemand, Offer: "test-od", USDPerHour: 5, Ready: 1, Desired: 1},
	} {
		rs.At, rs.Workload, rs.GPUModel, rs.GPUs = clk.Now().Add(-time.Hour), "svc", "H100-80GB", 1
		if err := pub.Publish(ctx, events.Stamp(rs)); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: env.JS,
		Actuator: actuate.Router{"a": sim.New(cfg, clk.Now)}, Clock: clk, Identity: "test", LeaseTTL: time.Second,
		Registry: reg, Policy: placement.Policy{MaxHedge: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(system.SpendMetrics(sys.Budgets))
	if err := sys.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sys.Close(); err != nil {
			t.Error(err)
		}
	}()
	sys.Service.Step(ctx)
	got := gauges(t, reg)
	want := map[string]float64{
		"bursar_spend_usd_per_hour{location=a,market=spot,workload=svc}":      6,
		"bursar_spend_usd_per_hour{location=a,market=on_demand,workload=svc}": 5,
		"bursar_budget_spend_usd{basis=actual,policy=svc-day}":                11,
		"bursar_budget_spend_usd{basis=forecast,policy=svc-day}":              11 + 11*12,
		"bursar_budget_limit_usd{policy=svc-day}":                             100,
		"bursar_budget_burn_usd_per_hour{policy=svc-day}":                     11,
	}
	for k, w := range want {
		if v, ok := got[k]; !ok || math.Abs(v-w) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, w)
		}
	}
}

// gauges gathers reg's bursar_spend and bursar_budget series as name{label=value,...} -> value.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName() + "{"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				out[key+"}"] = g.GetValue()
			}
		}
	}
	return out
}
