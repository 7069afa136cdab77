package replay

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
	dir string
	ns  *server.Server
	nc  *nats.Conn
	js  jetstream.JetStream
	sys *system.System
}

func newSingle(Env) (Harness, error) { return &single{}, nil }

func (h *single) Bus(ctx context.Context) (*bus.Publisher, error) {
	dir, err := os.MkdirTemp("", "bursar-replay-")
	if err != nil {
		return nil, fmt.Errorf("creating the replay's NATS store: %w", err)
	}
	h.dir = dir
	if h.ns, err = bus.StartEmbedded(bus.EmbeddedOptions{Port: -1, StoreDir: dir}); err != nil {
		return nil, err
	}
	nc, js, err := bus.ConnectEmbedded(ctx, h.ns, dir, "replay", slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	h.nc, h.js = nc, js
	if err := bus.Ensure(ctx, js, bus.Options{LeaseTTL: leaseTTL}); err != nil {
		return nil, err
	}
	return bus.NewPublisher(js), nil
}

func (h *single) Start(ctx context.Context, o arbiter.Options) error {
	o.JS, o.Identity = h.js, "replay"
	var err error
	if h.sys, err = system.New(ctx, system.Options{Arbiter: o}); err != nil {
		return err
	}
	return h.sys.Start(ctx)
}

func (h *single) Step(ctx context.Context, _ int) { h.sys.Service.Step(ctx) }

func (h *single) AwaitNotices(ctx context.Context, ids []string) error {
	return h.sys.Service.AwaitNotices(ctx, ids)
}

func (h *single) Close() error {
	var err error
	if h.sys != nil {
		err = h.sys.Close()
	}
	if h.nc != nil {
		h.nc.Close()
	}
	if h.ns != nil {
		h.ns.Shutdown()
		h.ns.WaitForShutdown()
	}
	if h.dir != "" {
		os.RemoveAll(h.dir)
	}
	return err
}

// leaseTTL is the replay's leader lease: one arbiter, so it only needs to outlast a round.
const leaseTTL = time.Minute
