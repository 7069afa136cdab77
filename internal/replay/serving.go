package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/serving"
	"github.com/bursar-dev/bursar/internal/system"
)

func init() {
	// A hindsight registration only so that the window's capacity reaches the sim fleet, which is
	// the market: the arbiter sees what a provider shows, launches left pending and reclaims.
	if err := serving.Register("bursar", newServingService, true); err != nil {
		panic(err)
	}
}

// servingService is SERVING.md's bursar policy: `arbiter run`'s service on the virtual clock, as
// the bursar policy of the replica replay (service.go) runs it, fed tokens.sample events from the
// window's demand and price.observed events for its sources. serving's bursar-direct drives the
// planner alone on the same inputs; the two are compared in serving_test.go.
//
// The fleet file it generates has one location per source (its zone in the location's zones),
// since the arbiter scales a workload per location and market: two GPU types in one location and
// market would be one group. A spot source's capacity is then its location's, as the sim models
// capacity (per location, spot only; on-demand is never short).
type servingService struct {
	w     *serving.Window
	ctx   context.Context
	stop  context.CancelFunc
	clk   *Clock
	fleet *sim.Fleet
	h     *single
	pub   *bus.Publisher
	cfg   *fleet.Config
	// groups[i] is the fleet group source i is held in.
	groups []actuate.Group
	// tokens is the replayed replica's generation-token counter, and sum the demand it counts in
	// exact tokens: the counter is sum rounded, so rounding never accumulates.
	tokens int64
	sum    float64
	// reg holds the arbiter's metrics, where its forecast error is read (MAPE).
	reg *prometheus.Registry
	err error
}

// servingWorkload and servingReplica name the replayed workload and the one replica series its
// token samples come from.
const (
	servingWorkload = "svc"
	servingReplica  = "replay"
	servingProvider = "gcp"
)

// servingEpoch is the wall time of tick 0 (as serving's bursar-direct).
var servingEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newServingService(env serving.Env) (serving.Policy, error) {
	if env.Window == nil {
		return nil, errors.New("the bursar service needs the window's capacity for its sim fleet")
	}
	ctx, stop := context.WithCancel(context.Background())
	p := &servingService{w: env.Window, ctx: ctx, stop: stop, clk: NewClock(servingEpoch), h: &single{},
		reg: prometheus.NewRegistry()}
	if err := p.build(env.PastDemand); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// build starts NATS, publishes the sources' prices and the demand before the window, and starts
// the arbiter over the sim fleet: it reads that week back (DemandLookback) as a restarted
// arbiter would, so its forecaster starts where bursar-direct's does.
func (p *servingService) build(past []float64) error {
	var err error
	if p.cfg, err = servingConfig(p.w); err != nil {
		return err
	}
	p.fleet = sim.New(p.cfg, p.clk.Now)
	p.fleet.SetNotice(0) // SERVING.md: GCP's 30 s notice is under a tick, a reclaimed replica is gone at once
	p.groups = make([]actuate.Group, len(p.w.Sources))
	for i, s := range p.w.Sources {
		p.groups[i] = actuate.Group{Workload: servingWorkload, Location: sourceLocation(i, s), Market: market(s)}
	}
	// A free port, not NATS's 4222: windows and other replays may run beside this one.
	if p.h.in, err = system.OpenInfra(p.ctx, system.InfraOptions{Name: "serving-replay",
		Embedded: bus.EmbeddedOptions{Port: -1}, Streams: bus.Options{LeaseTTL: leaseTTL}}); err != nil {
		return err
	}
	p.pub = bus.NewPublisher(p.h.in.JS)
	if err := p.pub.PublishBatch(p.ctx, p.prices()); err != nil {
		return fmt.Errorf("publishing the sources' prices: %w", err)
	}
	if err := p.pub.PublishBatch(p.ctx, p.history(past)); err != nil {
		return fmt.Errorf("publishing the demand before the window: %w", err)
	}
	pol := placement.DefaultPolicy()
	pol.ReactionTime = time.Minute // as bursar-direct: the arbiter acts once a tick
	return p.h.Start(p.ctx, arbiter.Options{Config: p.cfg, Actuator: p.fleet, Log: slog.New(slog.DiscardHandler),
		Registry: p.reg, Clock: p.clk, LeaseTTL: leaseTTL, Policy: pol, DemandLookback: time.Duration(len(past)+1) * time.Minute})
}

// sourceLocation is the fleet location of source i, s: one per source, named by its index first.
// The planner breaks ties between offers of one price by their ids, which the arbiter makes
// from the location's name and bursar-direct from the index alone ("12" before "5"): the '-'
// after the index sorts below any digit, so the two orders are the same.
func sourceLocation(i int, s serving.Source) string {
	return LocationName(fmt.Sprintf("s%d-%s-%s", i, s.Zone, s.Type))
}

func market(s serving.Source) events.Market {
	if s.Spot {
		return events.Spot
	}
	return events.OnDemand
}

// servingConfig is the window as a fleet file: one sim location per source, whose region is its
// own name so that a price event finds its location, and one serving workload sized in
// tokens per second with the sources' rates, at least one replica, spot and on-demand.
//
// The sim's launch delay is a tick longer than the window's cold start: a replica launched at
// tick l is ready from l+ColdStart by the simulator's rule, which a policy deciding tick t learns
// at the end of t-1; the arbiter reads readiness from the sim at the start of a tick, so the sim
// reports it ready one tick later (as in service.go). The workload's cold start is the window's,
// as bursar-direct tells the planner, and both forecast that many minutes ahead.
func servingConfig(w *serving.Window) (*fleet.Config, error) {
	cold, delay := time.Duration(w.ColdStart)*time.Minute, time.Duration(w.ColdStart+1)*time.Minute
	var b strings.Builder
	b.WriteString("locations:\n")
	rates := map[string]float64{}
	var models []string
	gpus := 0
	for i, s := range w.Sources {
		if _, ok := rates[s.Type]; !ok {
			models = append(models, s.Type)
		}
		rates[s.Type] = s.Rate
		gpus = max(gpus, s.GPUs, 1)
		loc := sourceLocation(i, s)
		fmt.Fprintf(&b, "  - {name: %q, provider: %s, region: %q, zones: [%q], actuator: {kind: sim, launch_delay: %s}}\n",
			loc, servingProvider, loc, s.Zone, delay)
	}
	fmt.Fprintf(&b, `workloads:
  - name: %s
    gpu: {models: [%s], count: %d}
    replicas: {min: 1}
    markets: [spot, on_demand]
    cold_start: %s
    scaling: {metric: tokens_per_second}
    serving:
      availability_target: %g
      per_replica: {`, servingWorkload, strings.Join(quoted(models), ", "), gpus, cold, serving.DirectTarget)
	for i, m := range models {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %v", m, rates[m])
	}
	b.WriteString("}\n")
	return fleet.Parse([]byte(b.String()), "serving-replay.yaml")
}

func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// prices are one price.observed per source, at tick 0.
func (p *servingService) prices() []events.Event {
	out := make([]events.Event, 0, len(p.w.Sources))
	for i, s := range p.w.Sources {
		out = append(out, &events.PriceObserved{Meta: events.Meta{At: servingEpoch}, Provider: servingProvider,
			Region: p.groups[i].Location, Zone: s.Zone, InstanceType: s.Type, GPUModel: s.Type, GPUCount: max(s.GPUs, 1),
			Market: market(s), USDPerHour: s.USDPerHour, Source: "replay"})
	}
	return out
}

// history is the demand before the window as the replica's token samples: a first one setting
// the counter's start, then one a minute, each dated at the end of the minute it counts (the
// last one at tick 0), as a scrape each minute would have recorded them. Without any past
// demand it is the first sample alone, at tick 0.
func (p *servingService) history(past []float64) []events.Event {
	out := []events.Event{p.sample(-len(past))}
	for k, d := range past {
		p.count(d)
		out = append(out, p.sample(k+1-len(past)))
	}
	return out
}

// count adds a minute of demand d (output tokens/s) to the counter.
func (p *servingService) count(d float64) {
	p.sum += d * 60
	p.tokens = int64(math.Round(p.sum))
}

// sample is the replica's counter as scraped at tick t.
func (p *servingService) sample(t int) *events.TokensSample {
	return &events.TokensSample{Meta: events.Meta{At: servingEpoch.Add(time.Duration(t) * time.Minute)},
		Location: p.groups[0].Location, Workload: servingWorkload, Replica: servingReplica, Server: "other",
		GenerationTokens: p.tokens}
}

// Decide is tick t: the sample that closes tick t-1's demand, the arbiter's round (it plans and
// acts on the sim fleet), then the market's clamp with tick t's capacity and the notices of what
// it reclaimed, folded before the next round. What the arbiter asked the fleet for is the
// decision: the simulator's own clamp then holds exactly what the sim fleet holds (newest first,
// launches beyond capacity getting nothing), and a launch left pending is tried again next tick
// by both, until the arbiter gives it up.
func (p *servingService) Decide(obs *serving.Observation) serving.Decision {
	t := obs.Tick
	if p.err == nil {
		p.err = p.tick(t, obs)
	}
	d := serving.Decision{Held: make([]int, len(p.groups))}
	for i, g := range p.groups {
		d.Held[i], _ = p.fleet.Desired(p.ctx, g)
	}
	return d
}

func (p *servingService) tick(t int, obs *serving.Observation) error {
	p.clk.Set(servingEpoch.Add(time.Duration(t) * time.Minute))
	if t > 0 {
		p.count(obs.Demand[t-1])
		if err := p.pub.Publish(p.ctx, p.sample(t)); err != nil {
			return fmt.Errorf("tick %d: publishing the token sample: %w", t, err)
		}
		if err := p.h.sys.Service.AwaitFolded(p.ctx); err != nil {
			return fmt.Errorf("tick %d: %w", t, err)
		}
	}
	p.h.Step(p.ctx, t)
	for i, s := range p.w.Sources {
		if s.Spot {
			p.fleet.SetCapacity(p.groups[i].Location, p.w.Capacity[t][i])
		}
	}
	if _, err := p.fleet.Notify(p.ctx, p.pub, p.h.AwaitNotices); err != nil {
		return fmt.Errorf("tick %d: %w", t, err)
	}
	return nil
}

// MAPE is the arbiter's own forecast error at its horizon, as it exports it
// (bursar_arbiter_demand_forecast_mape_pct); 0 before it has measured one.
func (p *servingService) MAPE() float64 {
	mfs, err := p.reg.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != "bursar_arbiter_demand_forecast_mape_pct" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == servingWorkload {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

// Close stops the arbiter and NATS and returns what went wrong during the window.
func (p *servingService) Close() error {
	p.err = errors.Join(p.err, p.h.Close())
	p.stop()
	return p.err
}
