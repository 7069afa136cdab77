package arbiter_test

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
	log   *slog.Logger // the arbiters' log; nil discards it
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

// running is an arbiter started by a test, on a NATS connection of its own.
type running struct {
	*arbiter.Service
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan error
}

// Kill crashes the arbiter's process as far as the bus can tell: its connection drops, so it
// writes nothing more, renews no lease and releases none.
func (r *running) Kill() { r.nc.Close() }

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
	nc, js := h.env.ConnectAs(h.t, bus.RoleArbiter)
	return h.startOn(id, nc, js, tweak)
}

// startOn is start on a given connection.
func (h *harness) startOn(id string, nc *nats.Conn, js jetstream.JetStream, tweak func(*arbiter.Options)) *running {
	h.t.Helper()
	o := arbiter.Options{Config: h.cfg, JS: js, Actuator: actuate.Router{"a": h.sim, "b": h.sim},
		Log: cmp.Or(h.log, slog.New(slog.DiscardHandler)), Clock: h.clock, Identity: id, LeaseTTL: time.Second,
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
	r := &running{Service: svc, nc: nc, cancel: cancel, done: make(chan error, 1)}
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

// price publishes the price of an H100 (p5.xlarge) in zone and returns the offer's id.
func (h *harness) price(zone string, m events.Market, usd float64) string {
	h.t.Helper()
	return h.priceOf(zone, "p5.xlarge", "H100-80GB", m, usd)
}

func (h *harness) priceOf(zone, instanceType, model string, m events.Market, usd float64) string {
	h.t.Helper()
	e, id := h.priceEvent(zone, instanceType, model, m, usd)
	if err := h.pub.Publish(context.Background(), e); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// h100Prices publishes the H100 prices of zones in one batch message, so the arbiter folds them
// at once (no plan sees one without the others), and returns the offers' ids.
func (h *harness) h100Prices(m events.Market, usd float64, zones ...string) []string {
	h.t.Helper()
	var evs []events.Event
	var ids []string
	for _, z := range zones {
		e, id := h.priceEvent(z, "p5.xlarge", "H100-80GB", m, usd)
		evs, ids = append(evs, e), append(ids, id)
	}
	if err := h.pub.PublishBatch(context.Background(), evs); err != nil {
		h.t.Fatal(err)
	}
	return ids
}

func (h *harness) priceEvent(zone, instanceType, model string, m events.Market, usd float64) (*events.PriceObserved, string) {
	e := &events.PriceObserved{Meta: events.Meta{At: h.clock.Now()}, Provider: "aws", Region: "us-east-1", Zone: zone,
		InstanceType: instanceType, GPUModel: model, GPUCount: 1, GPUMemoryGB: 80, Market: m, USDPerHour: usd,
		Source: "test"}
	loc, _ := h.cfg.Match("aws", "us-east-1", zone)
	return e, loc.Name + "/" + zone + "/" + instanceType + "/" + string(m)
}

// settle reports, plans and waits until the arbiter has no action in flight.
func (h *harness) settle(ctx context.Context, r *running) {
	h.t.Helper()
	r.Report(ctx)
	r.Pass(ctx)
	eventually(h.t, "no action is in flight", func() bool { return r.InFlight() == 0 })
	r.Report(ctx)
}

// heldPass runs a full pass that caps holds (caps.hold was called) and returns once it waits
// there; the channel closes when the pass ends.
func (h *harness) heldPass(ctx context.Context, t *testing.T, r *running, caps *heldCaps) <-chan struct{} {
	t.Helper()
	passed := make(chan struct{})
	go func() { r.Pass(ctx); close(passed) }()
	await(t, caps.held, "the full pass to begin")
	return passed
}

// reclaimIsReplaced publishes a reclaim notice for a spot instance in zone and waits until its
// replacement reaches the actuator.
func (h *harness) reclaimIsReplaced(ctx context.Context, t *testing.T, zone, while string) {
	t.Helper()
	notice, ok := h.sim.Reclaim(zone, 2*time.Minute)
	if !ok {
		t.Fatalf("no spot instance to reclaim in zone %s", zone)
	}
	before := len(h.sim.Calls()) // placement's own fallback launches are not replacements
	if err := h.pub.Publish(ctx, notice); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the replacement reaches the actuator while "+while, func() bool {
		return slices.ContainsFunc(h.sim.Calls()[before:], isReplacement)
	})
}

// await waits up to 10 s for a value on ch or its close.
func await[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// settleReclaim lets a reclaim play out (five rounds of 30 s), then checks that want replicas are
// ready and that every action reached the actuator once.
func (h *harness) settleReclaim(ctx context.Context, t *testing.T, r *running, want int) {
	t.Helper()
	for range 5 {
		h.clock.Advance(30 * time.Second)
		h.settle(ctx, r)
	}
	if n := ready(h); n != want {
		t.Errorf("%d replicas ready after the reclaim settled, want %d", n, want)
	}
	h.onlyOnce(t)
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

// crashing is a sim actuator whose process dies at one point of the first call it gets: "before"
// the call reaches the fleet (after the arbiter recorded it as calling) or "after" it went
// through (before the arbiter records it as applied). Dying closes the arbiter's connection.
type crashing struct {
	*sim.Fleet
	point   string
	nc      *nats.Conn
	crashed atomic.Bool
}

var errCrashed = errors.New("the process died")

func (c *crashing) Scale(ctx context.Context, tg actuate.Target) error {
	if c.crashed.Swap(true) {
		return errCrashed
	}
	if c.point == "before" {
		c.nc.Close()
		return errCrashed
	}
	err := c.Fleet.Scale(ctx, tg)
	c.nc.Close()
	return err
}

// heldCaps is a budget store whose reads can be held: once hold is called, each full pass waits
// in reading the caps (after it took the books, before it plans) until release.
type heldCaps struct {
	on   atomic.Bool
	held chan struct{}
	gate chan struct{}
	once sync.Once
}

func newHeldCaps() *heldCaps {
	return &heldCaps{held: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (c *heldCaps) Caps(ctx context.Context) ([]placement.Budget, error) {
	if c.on.Load() {
		select {
		case c.held <- struct{}{}:
		default:
		}
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, nil
}

func (c *heldCaps) hold()    { c.on.Store(true) }
func (c *heldCaps) release() { c.once.Do(func() { c.on.Store(false); close(c.gate) }) }
