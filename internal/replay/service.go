package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

func init() {
	// The service is given the window's capacity only to hand it to the sim fleet, which is the
	// market; the arbiter sees what a provider would show it: launches pending, reclaim notices.
	register("bursar", ServicePolicy(newSingle), true)
}

// service replays a window through the real arbiter service: events over NATS, the
// capacity-model sim fleet as the actuator, and a virtual clock the replay advances one tick at
// a time. Where NATS and the arbiters run is its harness's. bursar-direct calls the planner
// alone, for comparison.
type service struct {
	env   Env
	ctx   context.Context
	stop  context.CancelFunc
	clk   *Clock
	world *world
	h     Harness
	pub   *bus.Publisher
	locs  []string // the zones' location names, then on-demand
	err   error
}

// ServiceGPU is the GPU of the replays through the service (this one's and the job replay's) as
// their fleet files name it.
const ServiceGPU = "V100-16GB"

// OnDemandLocation is the location of their on-demand offer.
const OnDemandLocation = "on-demand"

func newServiceOn(env Env, h Harness) (Policy, error) {
	ctx, stop := context.WithCancel(context.Background())
	p := &service{env: env, ctx: ctx, stop: stop, clk: NewClock(bursarEpoch), h: h}
	if err := p.build(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// build starts the harness with the sim fleet as the actuator and publishes the offers' prices.
func (p *service) build() error {
	cfg, err := p.fleetConfig()
	if err != nil {
		return err
	}
	p.world = &world{fleet: p.newFleet(cfg), cfg: cfg}
	if p.pub, err = p.h.Bus(p.ctx); err != nil {
		return err
	}
	if err := p.prices(); err != nil {
		return err
	}
	return p.h.Start(p.ctx, arbiter.Options{Config: cfg, Actuator: p.world, Log: slog.New(slog.DiscardHandler),
		Clock: p.clk, LeaseTTL: leaseTTL, Policy: p.policy()})
}

func (p *service) newFleet(cfg *fleet.Config) *sim.Fleet {
	f := sim.New(cfg, p.clk.Now)
	f.SetNotice(0) // REPLAY.md: a lost instance is gone at once
	return f
}

// policy is the planner's policy, as bursar-direct sets it.
func (p *service) policy() placement.Policy {
	pol := placement.DefaultPolicy()
	pol.ReactionTime = p.env.Rules.TickLength()
	pol.MaxHedge = p.env.Rules.Extra
	if p.env.Rules.Extra == 0 {
		pol.MaxHedge = -1
	}
	return pol
}

// fleetConfig is the replay as a fleet file: one sim location per zone and one for on-demand,
// one workload of at least Target replicas (no upper bound, as bursar-direct gives the planner
// none) with the replay's cold start.
//
// The sim's launch delay is one tick longer than the cold start. An instance launched at tick L
// counts as ready at L+D only if it survives tick L+D's clamp (REPLAY.md rule 4), so a policy
// deciding tick t, which knows the end of tick t-1, knows it ready from L+D+1 on; the arbiter
// reads readiness from the sim at the start of the tick, before its clamp, so the sim reports it
// ready one tick after the cold start. bursar-direct knows readiness the same way (its state).
func (p *service) fleetConfig() (*fleet.Config, error) {
	r := p.env.Rules
	delay := time.Duration(r.ColdStart) * r.TickLength()
	known := delay + r.TickLength()
	var b strings.Builder
	b.WriteString("locations:\n")
	p.locs = nil
	for _, z := range append(append([]string(nil), p.env.Zones...), OnDemandLocation) {
		name := LocationName(z)
		p.locs = append(p.locs, name)
		fmt.Fprintf(&b, "  - {name: %q, provider: aws, region: replay, zones: [%q], actuator: {kind: sim, launch_delay: %s}}\n",
			name, name, known)
	}
	fmt.Fprintf(&b, `workloads:
  - name: %s
    gpu: {models: [%s], count: 1}
    replicas: {min: %d}
    markets: [spot, on_demand]
    cold_start: %s
`, bursarWorkload, ServiceGPU, r.Target, delay)
	return fleet.Parse([]byte(b.String()), "replay.yaml")
}

// LocationName makes a zone's name a fleet location name (letters, digits, '-' and '_'); the job
// replay names its zones the same way.
func LocationName(z string) string {
	return strings.Map(func(c rune) rune {
		if c == '-' || c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
			return c
		}
		return '-'
	}, z)
}

// prices publishes every zone's spot offer at 1 per hour and the on-demand offer at the ratio.
func (p *service) prices() error {
	return PublishPrices(p.ctx, p.pub, p.clk.Now(), p.locs[:len(p.locs)-1], 1, p.env.Rules.ODRatio)
}

// PublishPrices publishes the offers of a replay through the service at time at: each spot
// location's at spotUSD an hour, then the on-demand location's at odUSD. The job replay
// publishes its own with it.
func PublishPrices(ctx context.Context, pub *bus.Publisher, at time.Time, spot []string, spotUSD, odUSD float64) error {
	for _, loc := range append(append([]string(nil), spot...), OnDemandLocation) {
		m, usd := events.Spot, spotUSD
		if loc == OnDemandLocation {
			m, usd = events.OnDemand, odUSD
		}
		e := &events.PriceObserved{Meta: events.Meta{At: at}, Provider: "aws", Region: "replay", Zone: loc,
			InstanceType: "replay", GPUModel: ServiceGPU, GPUCount: 1, GPUMemoryGB: 16, Market: m, USDPerHour: usd,
			Source: "replay"}
		if err := pub.Publish(ctx, e); err != nil {
			return fmt.Errorf("publishing the replay's prices: %w", err)
		}
	}
	return nil
}

// Decide runs the arbiter for tick t, then lets the market clamp with the tick's capacity and
// publishes what it reclaimed. What the arbiter asked the fleet for is the decision; the replay's
// own clamp then holds exactly what the fleet holds.
func (p *service) Decide(obs *Observation) Decision {
	if obs.Tick == 0 {
		p.warmUp(obs.Past)
	}
	p.tick(obs.Tick, p.env.Capacity[obs.Tick])
	return p.asked()
}

// warmUp runs the service over the market before the window, as a running service would have,
// then starts the window on an empty fleet: the arbiter keeps what it learned, and its books
// follow the fleet (the actuator's truth) to nothing held, like every other policy's.
func (p *service) warmUp(past [][]int) {
	n := min(len(past), int(bursarMemory/p.env.Rules.TickLength()))
	for s := -n; s < 0; s++ {
		p.tick(s, past[len(past)+s])
	}
	p.world.swap(p.newFleet(p.world.cfg))
}

// tick is one tick at virtual time: the arbiter's round, the capacity clamp, the notices.
func (p *service) tick(t int, capacity []int) {
	if p.err != nil {
		return
	}
	p.clk.Set(bursarEpoch.Add(time.Duration(t) * p.env.Rules.TickLength()))
	p.h.Step(p.ctx, t)
	f := p.world.current()
	for z, n := range capacity {
		f.SetCapacity(p.locs[z], n)
	}
	if _, err := f.Notify(p.ctx, p.pub, p.h.AwaitNotices); err != nil {
		p.err = fmt.Errorf("tick %d: %w", t, err)
	}
}

// asked is what the fleet was asked to hold: spot per zone, on-demand.
func (p *service) asked() Decision {
	f := p.world.current()
	d := Decision{Spot: make([]int, len(p.env.Zones))}
	for z := range p.env.Zones {
		d.Spot[z], _ = f.Desired(p.ctx, actuate.Group{Workload: bursarWorkload, Location: p.locs[z], Market: events.Spot})
	}
	d.OnDemand, _ = f.Desired(p.ctx, actuate.Group{Workload: bursarWorkload, Location: OnDemandLocation, Market: events.OnDemand})
	return d
}

// Close stops the harness and returns what went wrong during the window.
func (p *service) Close() error {
	p.err = errors.Join(p.err, p.h.Close())
	p.stop()
	return p.err
}

// Clock is a replay's time: it stands still until the replay moves it (Set). The job replay
// (internal/jobreplay) steps its arbiter on one too.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// world is the actuator the arbiter talks to: the sim fleet of the moment (the warm-up's, then
// the window's).
type world struct {
	mu    sync.Mutex
	fleet *sim.Fleet
	cfg   *fleet.Config
}

var (
	_ actuate.Actuator = (*world)(nil)
	_ actuate.Reporter = (*world)(nil)
)

func (w *world) current() *sim.Fleet {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fleet
}

func (w *world) swap(f *sim.Fleet) {
	w.mu.Lock()
	w.fleet = f
	w.mu.Unlock()
}

func (w *world) Scale(ctx context.Context, t actuate.Target) error { return w.current().Scale(ctx, t) }

func (w *world) Desired(ctx context.Context, g actuate.Group) (int, error) {
	return w.current().Desired(ctx, g)
}

func (w *world) Observe(ctx context.Context) ([]actuate.Observed, error) {
	return w.current().Observe(ctx)
}
