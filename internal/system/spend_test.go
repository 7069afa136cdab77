package system_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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

// TestSpendCounter: bursar_spend_usd_total counts, per workload, location and market, what the
// ready replicas cost since the metrics were made (not before, though the ledger knows the hour
// before), and follows a change of the replica count from the change's time on.
func TestSpendCounter(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	clk := &clock{now: start}
	pub := bus.NewPublisher(env.JS)
	publish := func(at time.Time, market events.Market, price float64, ready int) {
		t.Helper()
		rs := &events.ReplicaState{Workload: "svc", Location: "a", Provider: "aws", Market: market,
			Offer: "test-" + string(market), USDPerHour: price, Ready: ready, Desired: ready, GPUModel: "H100-80GB", GPUs: 1}
		rs.At = at
		if err := pub.Publish(ctx, events.Stamp(rs)); err != nil {
			t.Fatal(err)
		}
	}
	publish(start.Add(-time.Hour), events.Spot, 3, 2)
	publish(start.Add(-time.Hour), events.OnDemand, 5, 1)
	reg := prometheus.NewRegistry()
	sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: env.JS,
		Actuator: actuate.Router{"a": sim.New(cfg, clk.Now)}, Clock: clk, Identity: "test", LeaseTTL: time.Second,
		Registry: reg, Policy: placement.Policy{MaxHedge: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(system.SpendMetricsAt(sys.Budgets, clk.Now))
	if err := sys.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sys.Close(); err != nil {
			t.Error(err)
		}
	}()
	const spot, onDemand = "bursar_spend_usd_total{location=a,market=spot,workload=svc}",
		"bursar_spend_usd_total{location=a,market=on_demand,workload=svc}"
	check := func(when string, want map[string]float64) {
		t.Helper()
		got := counters(t, reg)
		for k, w := range want {
			if v, ok := got[k]; !ok || math.Abs(v-w) > 1e-9 {
				t.Errorf("%s: %s = %v (present %v), want %v", when, k, v, ok, w)
			}
		}
	}
	setClock(clk, start.Add(30*time.Minute))
	check("after 30 min", map[string]float64{spot: 2 * 3 * 0.5, onDemand: 5 * 0.5})

	publish(start.Add(40*time.Minute), events.Spot, 3, 1) // one spot replica goes at 12:40
	deadline := time.Now().Add(10 * time.Second)
	for !spotCount(sys.Budgets, 1) {
		if time.Now().After(deadline) {
			t.Fatal("the ledger never saw the spot replica go")
		}
		time.Sleep(10 * time.Millisecond)
	}
	setClock(clk, start.Add(time.Hour))
	check("after an hour", map[string]float64{spot: 3 + 2*3*(10.0/60) + 3*(20.0/60), onDemand: 5})
}

func setClock(c *clock, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// spotCount says whether n spot replicas run now, as the budgets' ledger has it.
func spotCount(b *arbiter.Budgets, n int) bool {
	_, running := b.Position()
	for _, iv := range running {
		if iv.Market == string(events.Spot) {
			return iv.Count == n
		}
	}
	return false
}

// counters gathers reg's counters as name{label=value,...} -> value.
func counters(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for k, m := range gather(t, reg) {
		if c := m.GetCounter(); c != nil {
			out[k] = c.GetValue()
		}
	}
	return out
}

// gauges gathers reg's bursar_spend and bursar_budget series as name{label=value,...} -> value.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for k, m := range gather(t, reg) {
		if g := m.GetGauge(); g != nil {
			out[k] = g.GetValue()
		}
	}
	return out
}

// gather returns reg's series by name{label=value,...}.
func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.Metric{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName() + "{"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			out[key+"}"] = m
		}
	}
	return out
}
