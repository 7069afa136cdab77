package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/recorder"
	"github.com/bursar-dev/bursar/internal/replay"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/system"
)

// leaseTTL is the soak's leader lease: a killed leader's standby takes over within it.
const leaseTTL = 5 * time.Second

// leaderWait is how long the soak waits for an arbiter to lead before it calls the run failed:
// a cut node heals after cutWall, and the streams then elect their leaders.
const leaderWait = 90 * time.Second

// rig is the soak's replay.Harness: the 3-node cluster, two arbiters (a leader and a standby,
// each on its own node), the recorder on the third, a collector's telemetry at a steady rate,
// and the faults of the run at their ticks.
type rig struct {
	o      Options
	run    *runStats
	env    replay.Env
	faults []fault // by tick; none in the run without faults
	log    *slog.Logger

	ctx   context.Context
	cl    *cluster
	nc    *nats.Conn // the market's and the checks' connection
	js    jetstream.JetStream
	pub   *bus.Publisher
	st    *faultyStore
	rec   *recording
	load  *load
	base  arbiter.Options
	act   *counted
	books *slowBooks
	arbs  [2]*arb
	lead  string // identity of the last leader seen
	clock arbiter.Clock
	tick  atomic.Int64 // the tick being run
	mu    sync.Mutex
	errs  []error
}

// now is the market's time, once the arbiters started.
func (r *rig) now() time.Time {
	if c := r.clockOf(); c != nil {
		return c.Now()
	}
	return time.Now()
}

func (r *rig) clockOf() arbiter.Clock {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clock
}

// arb is one arbiter process: its connection, its system and whether it is alive.
type arb struct {
	id    string
	node  int
	nc    *nats.Conn
	sys   *system.System
	act   *gate
	alive bool
}

func newRig(o Options, run *runStats, env replay.Env) *rig {
	return &rig{o: o, run: run, env: env, log: o.Log, lead: ""}
}

func (r *rig) Bus(ctx context.Context) (*bus.Publisher, error) {
	r.ctx = ctx
	dir, err := os.MkdirTemp(r.o.Dir, "soak-")
	if err != nil {
		return nil, fmt.Errorf("creating the soak's directory: %w", err)
	}
	if r.cl, err = startCluster(dir, r.log.With("part", "nats")); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, js, err := r.cl.connect(cctx, bus.RoleArbiter, "soak-market", 2)
	if err != nil {
		return nil, err
	}
	r.nc, r.js = nc, js
	if err := r.cl.ready(cctx, js); err != nil {
		return nil, err
	}
	if err := ensure(cctx, js); err != nil {
		return nil, err
	}
	db := fmt.Sprintf("soak_%d_%s", r.o.Seed, map[bool]string{false: "calm", true: "faults"}[r.run.faults])
	r.st = &faultyStore{Store: store.New(r.o.Engine, db, store.Config{})}
	if err := r.st.Exec(cctx, "DROP DATABASE IF EXISTS "+db); err != nil {
		return nil, err
	}
	if err := r.st.Migrate(cctx); err != nil {
		return nil, fmt.Errorf("creating the soak's history store: %w", err)
	}
	if r.rec, err = r.startRecorder(ctx); err != nil {
		return nil, err
	}
	if r.load, err = r.startLoad(ctx); err != nil {
		return nil, err
	}
	r.pub = bus.NewPublisher(js)
	return r.pub, nil
}

func (r *rig) Start(ctx context.Context, o arbiter.Options) error {
	o.LeaseTTL = leaseTTL
	r.act = newCounted(o.Actuator.(actuated))
	r.mu.Lock()
	r.clock = o.Clock
	r.mu.Unlock()
	r.base = o
	if r.run.faults {
		r.faults = schedule(r.o.Seed, r.env.Rules.Window)
	}
	for i, id := range []string{"a1", "a2"} {
		a := &arb{id: id, node: i}
		r.arbs[i] = a
		if err := r.startArbiter(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// startArbiter starts a as `arbiter run` would, on its own connection to its node; it leads if
// nobody does.
func (r *rig) startArbiter(ctx context.Context, a *arb) error {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, js, err := r.cl.connect(cctx, bus.RoleArbiter, "soak-"+a.id, a.node)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(cctx, bus.BucketPlacement)
	if err != nil {
		nc.Close()
		return fmt.Errorf("arbiter %s: %w", a.id, err)
	}
	o := r.base
	a.act = &gate{counted: r.act}
	o.JS, o.Identity, o.Actuator = js, a.id, a.act
	o.Log = r.log.With("arbiter", a.id)
	o.Books = r.slow(kv)
	sys, err := system.New(ctx, system.Options{Arbiter: o, StandBy: true})
	if err != nil {
		nc.Close()
		return err
	}
	if err := sys.Start(ctx); err != nil {
		nc.Close()
		_ = sys.Close()
		return err
	}
	a.nc, a.sys, a.alive = nc, sys, true
	return nil
}

func (r *rig) Step(ctx context.Context, t int) {
	r.tick.Store(int64(t))
	stepped := false
	for i := range r.faults {
		stepped = r.inject(ctx, &r.faults[i], t) || stepped
	}
	if !stepped {
		for _, a := range r.arbs {
			if a.alive {
				a.sys.Service.Step(ctx)
			}
		}
	}
	r.fail(r.ensureLeader(ctx))
}

// ensureLeader steps the living arbiters at this instant until one leads: a takeover costs the
// lease's TTL of wall time, none of market time, as a leader's death costs a few seconds of a
// real market.
func (r *rig) ensureLeader(ctx context.Context) error {
	deadline := time.Now().Add(leaderWait)
	for {
		if l := r.leader(); l != nil {
			if l.id != r.lead {
				if r.lead != "" {
					r.run.leaderChanges++
				}
				r.lead = l.id
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no arbiter took the lead within %s", leaderWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(leaseTTL / 10):
		}
		for _, a := range r.arbs {
			if a.alive {
				a.sys.Service.Step(ctx)
			}
		}
	}
}

func (r *rig) leader() *arb {
	for _, a := range r.arbs {
		if a.alive && a.sys.Service.Leading() {
			return a
		}
	}
	return nil
}

func (r *rig) AwaitNotices(ctx context.Context, ids []string) error {
	l := r.leader()
	if l == nil {
		return errors.New("no arbiter leads to take the notices")
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return l.sys.Service.AwaitNotices(actx, ids)
}

// fail keeps err for the run's result.
func (r *rig) fail(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// Close checks the books against the actuator, stops the arbiters and the collector, lets the
// recorder catch up, checks that every event was recorded once, and stops everything.
func (r *rig) Close() error {
	ctx := context.WithoutCancel(r.ctx)
	if r.act != nil {
		r.fail(r.checkBooks(ctx))
	}
	for _, a := range r.arbs {
		if a != nil && a.alive {
			r.kill(a)
		}
	}
	if r.load != nil {
		r.load.stop()
	}
	if r.rec != nil {
		r.fail(r.checkRecorded(ctx))
		r.rec.stop()
	}
	if r.nc != nil {
		r.nc.Close()
	}
	if r.cl != nil {
		r.cl.close()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// kill stops a as kill -9 would: its connection drops at once, its actuator calls stop, and
// its goroutines end.
func (r *rig) kill(a *arb) {
	a.act.kill()
	a.nc.Close()
	_ = a.sys.Close() // what failed after the kill is the kill's doing
	a.alive = false
}

// recording is the recorder running on its own connection.
type recording struct {
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan error
}

func (r *rig) startRecorder(ctx context.Context) (*recording, error) {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, js, err := r.cl.connect(cctx, bus.RoleArbiter, "soak-recorder", 2)
	if err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(ctx)
	rec := &recording{nc: nc, cancel: stop, done: make(chan error, 1)}
	// A delivery lost in a node's restart comes back after AckWait: 15 s here, not the default
	// 5 min, so the run's end need not wait that long for it.
	cfg := recorder.Config{Log: r.log.With("part", "recorder"), MaxDelay: 250 * time.Millisecond,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, Check: time.Second, AckWait: 15 * time.Second}
	go func() {
		err := recorder.New(js, r.st, cfg).Run(rctx)
		if err != nil && rctx.Err() == nil {
			r.fail(fmt.Errorf("the recorder stopped: %w", err))
		}
		rec.done <- err
	}()
	return rec, nil
}

// stop kills the recorder: its connection first, so nothing in flight is acked.
func (rec *recording) stop() {
	rec.nc.Close()
	rec.cancel()
	<-rec.done
}

// ensure creates the streams and buckets at R3, trying again while the cluster does not yet
// know all its peers ("no suitable peers for placement").
func ensure(ctx context.Context, js jetstream.JetStream) error {
	for {
		err := bus.Ensure(ctx, js, bus.Options{Replicas: nodes, LeaseTTL: leaseTTL})
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
