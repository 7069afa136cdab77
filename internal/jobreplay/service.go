package jobreplay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/replay"
	"github.com/bursar-dev/bursar/internal/system"
)

// bursar replays a window through the live arbiter service, as "arbiter replay" does for serving
// replicas: an embedded NATS server, the arbiter stepped once a tick on a virtual clock, and the
// sim fleet as the market, its spot capacity in each zone set from the window's availability. The
// job is a workload of kind job in the fleet file; each tick the job reports its checkpointed
// progress (job.progress), reclaims reach the arbiter as notices, and what the fleet runs for the
// job (an instance that got capacity) is the tick's choice, billed under JOBS.md's rules by
// Simulate. A move is make-before-break: while the fleet runs the old instance beside the new one,
// the arbiter runs another round settleAfter later, as arbiter run does after its next report, and
// the seconds the old one was held are billed too (Overlap). bursar-direct asks the deadline
// planner alone, for comparison.
func init() { Register("bursar", newService, false) }

// serviceEpoch is the virtual time of a window's first tick.
var serviceEpoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// settleAfter is how long after a round the arbiter of arbiter run retires the old instance of a
// move whose new one got capacity: the next report (Options.ReportEvery, 15 s by default), the
// job loop's check (each second) and the debounce before the pass (1 s).
const settleAfter = 15*time.Second + time.Second + time.Second

// retryAfter is how long after a round the arbiter of arbiter run gives up a launch that found no
// capacity and places the job again: the next report (Options.ReportEvery), which wakes a pass at
// once when it shows such a launch.
const retryAfter = 15 * time.Second

const (
	serviceJob      = "job"
	serviceGPU      = replay.ServiceGPU
	serviceOnDemand = replay.OnDemandLocation
)

type service struct {
	set   Setting
	ctx   context.Context
	stop  context.CancelFunc
	clk   *replay.Clock
	in    *system.Infra
	sys   *system.System
	pub   *bus.Publisher
	svc   *arbiter.Service
	fleet *sim.Fleet
	locs  []string // the zones' location names
	// overlap is what was held beside the last tick's choice, and for how many seconds.
	overlap     Choice
	overlapSecs int64
	// late is how many seconds into the last tick its choice got capacity (tries that found none).
	late int64
	err  error
	once sync.Once
}

func newService(env Env) (Policy, error) {
	ctx, stop := context.WithCancel(context.Background())
	p := &service{set: env.Setting, ctx: ctx, stop: stop, clk: replay.NewClock(serviceEpoch)}
	if err := p.start(env.Zones); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// start brings up the bus, publishes the offers' prices and starts the arbiter on the job.
func (p *service) start(zones []string) error {
	cfg, err := p.fleetConfig(zones)
	if err != nil {
		return err
	}
	if p.in, err = system.OpenInfra(p.ctx, system.InfraOptions{Name: "jobs-replay",
		// A free port, not NATS's 4222: the windows run side by side, each on a bus of its own.
		Embedded: bus.EmbeddedOptions{Port: -1}, Streams: bus.Options{LeaseTTL: time.Minute}}); err != nil {
		return err
	}
	p.pub = bus.NewPublisher(p.in.JS)
	if err := p.prices(); err != nil {
		return err
	}
	p.fleet = sim.New(cfg, p.clk.Now)
	p.fleet.SetNotice(0) // a reclaimed instance is gone at the tick's boundary (JOBS.md step 1)
	tick := time.Duration(p.set.Tick) * time.Second
	if p.sys, err = p.in.System(p.ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, Actuator: p.fleet.Router(),
		Clock: p.clk, Identity: "jobs-replay", LeaseTTL: time.Minute, Interval: tick}}); err != nil {
		return err
	}
	p.svc = p.sys.Service
	return p.sys.Start(p.ctx)
}

// fleetConfig is the window as a fleet file: one sim location per zone, one for on-demand, and
// the job, launched at once (the changeover is the job's overhead).
func (p *service) fleetConfig(zones []string) (*fleet.Config, error) {
	var b strings.Builder
	b.WriteString("locations:\n")
	p.locs = nil
	for _, z := range append(append([]string(nil), zones...), serviceOnDemand) {
		name := replay.LocationName(z)
		if z != serviceOnDemand {
			p.locs = append(p.locs, name)
		}
		fmt.Fprintf(&b, "  - {name: %q, provider: aws, region: replay, zones: [%q], actuator: {kind: sim}}\n", name, name)
	}
	fmt.Fprintf(&b, `workloads:
  - name: %s
    kind: job
    gpu: {models: [%s], count: 1}
    markets: [spot, on_demand]
    job: {work: %ds, deadline_in: %ds, overhead: %ds}
`, serviceJob, serviceGPU, p.set.Work, p.set.Deadline, p.set.Overhead)
	return fleet.Parse([]byte(b.String()), "jobs-replay.yaml")
}

// prices publishes each zone's spot offer and the on-demand offer at the setting's prices.
func (p *service) prices() error {
	return replay.PublishPrices(p.ctx, p.pub, p.clk.Now(), p.locs, p.set.SpotPrice, p.set.ODPrice)
}

// Decide is one tick: the market takes this tick's availability (a lost spot instance is
// reclaimed with a notice), the job reports its progress, the arbiter runs a round (more while a
// move holds two instances or a launch waits for capacity), and what the fleet runs for the job
// is the choice.
func (p *service) Decide(v *View) Choice {
	p.overlap, p.overlapSecs, p.late = Idle, 0, 0
	if p.err != nil {
		return OD // the run is reported as failed by Close; on-demand keeps the deadline meanwhile
	}
	start := serviceEpoch.Add(time.Duration(v.T) * time.Second)
	p.moveTo(start)
	if err := p.market(v.Spot); err != nil {
		p.err = fmt.Errorf("tick at %d s: %w", v.T, err)
		return OD
	}
	if err := p.progress(v); err != nil {
		p.err = fmt.Errorf("tick at %d s: %w", v.T, err)
		return OD
	}
	p.round()
	return p.settle(v, start)
}

// round is one round of the arbiter at the clock's time, then the cost anomaly watcher's tick
// (moveTo says why).
func (p *service) round() {
	p.svc.Step(p.ctx)
	p.sys.Anomalies.Tick(p.ctx)
}

// moveTo moves the clock to t, ticking the cost anomaly watcher at each end of its 5-minute
// step on the way. The watcher has no timer on a stepped system, and it samples the spend at
// each step's end: a trace's 10-minute tick must not hand it the next round's spend for the
// step it skipped. Between rounds the spend is what the last one left, and only the watcher
// reads it, so the rounds are unchanged; the replay records the cost.anomaly events arbiter run
// would publish.
func (p *service) moveTo(t time.Time) {
	step := anomaly.DefaultConfig().Step // the watcher's: the system leaves it at the default
	for b := p.clk.Now().Truncate(step).Add(step); b.Before(t); b = b.Add(step) {
		p.clk.Set(b)
		p.sys.Anomalies.Tick(p.ctx)
	}
	p.clk.Set(t)
}

// settle lets the arbiter finish what the round began within the tick, as arbiter run does
// between its decisions: while the fleet runs two instances of the job (a move), another round
// settleAfter later retires the old one; while a launch of the job waits for capacity the
// provider has not got, another round retryAfter later gives it up and places the job again (on
// another zone's spot, on-demand, or nowhere). The choice is the instance that took over; the
// other one, held until it was retired (or the tick's end), is the tick's overlap; where nothing
// ran at the tick's start, the seconds before the choice got capacity are its lateness.
func (p *service) settle(v *View, start time.Time) Choice {
	tick := time.Duration(v.Tick) * time.Second
	held, waiting := p.held()
	after := time.Duration(0)
	since := map[Choice]time.Duration{}
	for {
		for _, c := range held {
			if _, ok := since[c]; !ok {
				since[c] = after
			}
		}
		next := after + retryAfter
		if len(held) > 1 {
			next = after + settleAfter
		} else if !waiting {
			break
		}
		if next >= tick {
			break
		}
		after = next
		p.moveTo(start.Add(after))
		p.round()
		held, waiting = p.held()
	}
	choice := p.choose(v, held, after)
	if v.Running.Kind == None && choice.Kind != None {
		p.late = int64(since[choice] / time.Second)
	}
	return choice
}

// choose is the tick's choice among what the fleet holds after the last round, after that round's
// start in the tick, and sets the tick's overlap.
func (p *service) choose(v *View, held []Choice, after time.Duration) Choice {
	switch len(held) {
	case 0:
		return Idle
	case 1:
		if held[0] != v.Running && v.Running.Kind != None && after > 0 {
			p.overlap, p.overlapSecs = v.Running, int64(after/time.Second)
		}
		return held[0]
	}
	// Still two at the tick's end: the new one is the choice, the old one is paid all the tick.
	choice := held[0]
	if choice == v.Running {
		choice = held[1]
	}
	p.overlap, p.overlapSecs = v.Running, v.Tick
	return choice
}

// Overlap is what the fleet held beside the last tick's choice, and for how many seconds.
func (p *service) Overlap() (Choice, int64) { return p.overlap, p.overlapSecs }

// Late is how many seconds into the last tick its choice got capacity, where nothing ran before.
func (p *service) Late() int64 { return p.late }

// market sets each zone's spot capacity and hands the arbiter the notices of what it took.
func (p *service) market(spot []bool) error {
	for z, ok := range spot {
		p.fleet.SetCapacity(p.locs[z], b2i(ok))
	}
	_, err := p.fleet.Notify(p.ctx, p.pub, p.svc.AwaitNotices)
	return err
}

// progress publishes the job's checkpointed progress, as the job itself would, where it ran.
func (p *service) progress(v *View) error {
	ran := v.Prev
	if ran.Kind == None {
		return nil
	}
	loc, m := serviceOnDemand, events.OnDemand
	if ran.Kind == Spot {
		loc, m = p.locs[ran.Zone], events.Spot
	}
	e := &events.JobProgress{Meta: events.Meta{At: p.clk.Now()}, Job: serviceJob, WorkDoneS: float64(v.Done),
		Location: loc, Market: m}
	if err := p.pub.Publish(p.ctx, e); err != nil {
		return fmt.Errorf("publishing the job's progress: %w", err)
	}
	return p.svc.AwaitFolded(p.ctx)
}

// held is what the fleet runs for the job: each group with an instance that got capacity
// (ready or starting), as the sim reports it; a launch pending for want of capacity runs nothing,
// and waiting says there is one.
func (p *service) held() (out []Choice, waiting bool) {
	obs, err := p.fleet.Observe(p.ctx)
	if err != nil {
		p.err = errors.Join(p.err, fmt.Errorf("observing the fleet: %w", err))
		return nil, false
	}
	for _, o := range obs {
		if o.Workload != serviceJob {
			continue
		}
		waiting = waiting || o.Pending > 0 && o.Reason == actuate.ReasonNoCapacity
		if o.Ready+len(o.Starting) == 0 {
			continue
		}
		if o.Market == events.Spot {
			out = append(out, SpotIn(slices.Index(p.locs, o.Location)))
		} else {
			out = append(out, OD)
		}
	}
	return out, waiting
}

// Close stops the arbiter and the bus and returns what went wrong during the window.
func (p *service) Close() error {
	p.once.Do(func() {
		if p.sys != nil {
			p.err = errors.Join(p.err, p.sys.Close())
		}
		p.stop()
		if p.in != nil {
			p.in.Close()
		}
	})
	return p.err
}
