package replay

import (
	"context"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/system"
)

// Harness is the bus and the arbiters a replay through the service runs on. The replay's own is
// one embedded server and one arbiter; the soak's is a NATS cluster, a standby, the recorder and
// faults. The service replay drives it round by round on its virtual clock.
type Harness interface {
	// Bus starts the bus and returns a publisher for the market's events.
	Bus(ctx context.Context) (*bus.Publisher, error)
	// Start starts the arbiter system on o (fleet, actuator, clock, log, policy: the harness
	// adds JetStream and identity), once the market's first events are published.
	Start(ctx context.Context, o arbiter.Options) error
	// Step is one round of the arbiters at the clock's time, tick t of the window (negative
	// during the warm-up).
	Step(ctx context.Context, t int)
	// AwaitNotices waits until the leading arbiter has folded the reclaim notices with these ids.
	AwaitNotices(ctx context.Context, ids []string) error
	// Close stops everything and returns what went wrong.
	Close() error
}

// ServicePolicy is the bursar policy through the live service, on harnesses from newHarness
// (one per window). It needs the window's capacity (a hindsight registration): the service hands
// it to the sim fleet, which is the market, never to the arbiter.
func ServicePolicy(newHarness func(Env) (Harness, error)) Factory {
	return func(env Env) (Policy, error) {
		h, err := newHarness(env)
		if err != nil {
			return nil, err
		}
		return newServiceOn(env, h)
	}
}

// single is the replay's own harness: one embedded NATS server and one arbiter.
type single struct {
	in  *system.Infra
	sys *system.System
}

func newSingle(Env) (Harness, error) { return &single{}, nil }

func (h *single) Bus(ctx context.Context) (*bus.Publisher, error) {
	var err error
	if h.in, err = system.OpenInfra(ctx, system.InfraOptions{Name: "replay",
		// A free port, not NATS's 4222: windows and other replays may run beside this one.
		Embedded: bus.EmbeddedOptions{Port: -1}, Streams: bus.Options{LeaseTTL: leaseTTL}}); err != nil {
		return nil, err
	}
	return bus.NewPublisher(h.in.JS), nil
}

func (h *single) Start(ctx context.Context, o arbiter.Options) error {
	o.Identity = "replay"
	var err error
	if h.sys, err = h.in.System(ctx, system.Options{Arbiter: o}); err != nil {
		return err
	}
	return h.sys.Start(ctx)
}

// Step is the service's round, then the cost anomaly watcher's tick, which has no timer on a
// stepped system: it observes each 5 minutes of the virtual clock once, at the first round at or
// after their end (between those it returns at once), so the replay records the cost.anomaly
// events arbiter run would publish. The watcher only reads the spend: the rounds are unchanged.
// With --tick over 5 minutes, the steps a tick spans are all given the spend of the round that
// ends it (the job replay, whose trace ticks are 10 minutes, ticks the watcher between rounds).
func (h *single) Step(ctx context.Context, _ int) {
	h.sys.Service.Step(ctx)
	h.sys.Anomalies.Tick(ctx)
}

func (h *single) AwaitNotices(ctx context.Context, ids []string) error {
	return h.sys.Service.AwaitNotices(ctx, ids)
}

func (h *single) Close() error {
	var err error
	if h.sys != nil {
		err = h.sys.Close()
	}
	if h.in != nil {
		h.in.Close()
	}
	return err
}

// leaseTTL is the replay's leader lease: one arbiter, so it only needs to outlast a round.
const leaseTTL = time.Minute
