package arbiter_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clock is a settable clock shared by the arbiter and the sim.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fleetYAML is two spot zones and on-demand of one AWS region, simulated with a 30 s launch.
const fleetYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], egress_per_gb: 0.09, actuator: {kind: sim, launch_delay: 30s}}
  - {name: b, provider: aws, region: us-east-1, zones: [us-east-1b], egress_per_gb: 0.09, actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - name: svc
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 2, max: 2}
    markets: [spot, on_demand]
    weights_gb: 50
    cold_start: 30s
`

type harness struct {
	t     *testing.T
	env   *bustest.Env
	cfg   *fleet.Config
	clock *clock
	sim   *sim.Fleet
	pub   *bus.Publisher
}

func newHarness(t *testing.T, yaml string) *harness {
	t.Helper()
	env := bustest.Start(t)
	if err := bus.Ensure(context.Background(), env.JS, bus.Options{LeaseTTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	cfg, err := fleet.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: t0}
	return &harness{t: t, env: env, cfg: cfg, clock: c, sim: sim.New(cfg, c.Now), pub: bus.NewPublisher(env.JS)}
}

// running is an arbiter started by a test.
type running struct {
	*arbiter.Service
	cancel context.CancelFunc
	done   chan error
}

// stop ends Run and waits for it.
func (r *running) stop(t *testing.T) {
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("arbiter: %v", err)
	}
}

// start runs an arbiter named id. Timers are long unless tweak shortens them: tests drive passes
// and reports themselves.
func (h *harness) start(id string, tweak func(*arbiter.Options)) *running {
	h.t.Helper()
	o := arbiter.Options{Config: h.cfg, JS: h.env.JS, Actuator: actuate.Router{"a": h.sim, "b": h.sim},
		Log: slog.New(slog.DiscardHandler), Clock: h.clock, Identity: id, LeaseTTL: time.Second,
		Policy:   placement.Policy{MaxHedge: -1},
		Debounce: time.Hour, Interval: time.Hour, ReportEvery: time.Hour}
	if tweak != nil {
		tweak(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := arbiter.New(ctx, o)
	if err != nil {
		h.t.Fatal(err)
	}
	r := &running{Service: svc, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- svc.Run(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
		}
	})
	return r
}

// eventually polls cond until it holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) price(zone string, m events.Market, usd float64) string {
	h.t.Helper()
	e := &events.PriceObserved{Meta: events.Meta{At: h.clock.Now()}, Provider: "aws", Region: "us-east-1", Zone: zone,
		InstanceType: "p5.xlarge", GPUModel: "H100-80GB", GPUCount: 1, GPUMemoryGB: 80, Market: m, USDPerHour: usd,
		Source: "test"}
	if err := h.pub.Publish(context.Background(), e); err != nil {
		h.t.Fatal(err)
	}
	loc, _ := h.cfg.Match("aws", "us-east-1", zone)
	return loc.Name + "/" + zone + "/p5.xlarge/" + string(m)
}

// settle reports, plans and waits until the arbiter has no action in flight.
func (h *harness) settle(ctx context.Context, r *running) {
	h.t.Helper()
	r.Report(ctx)
	r.Pass(ctx)
	eventually(h.t, "no action is in flight", func() bool { return r.InFlight() == 0 })
	r.Report(ctx)
}

// callsByID counts actuator calls per action id.
func (h *harness) callsByID() map[string]int {
	out := map[string]int{}
	for _, c := range h.sim.Calls() {
		out[c.ActionID]++
	}
	return out
}

func (h *harness) onlyOnce(t *testing.T) {
	t.Helper()
	for id, n := range h.callsByID() {
		if n != 1 {
			t.Errorf("action %s reached the actuator %d times, want once", id, n)
		}
	}
}
