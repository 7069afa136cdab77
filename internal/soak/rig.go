package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/replay"
	"github.com/bursar-dev/bursar/internal/slack"
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
	slack *fakeSlack
	holds *holdWatch
	warm  bool   // the first tick (the warm-up's) was seen
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

// arb is one arbiter process: its connection, its system, its Slack interaction endpoint and
// whether it is alive.
type arb struct {
	id       string
	node     int
	nc       *nats.Conn
	sys      *system.System
	act      *gate
	endpoint string
	alive    bool
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
	r.slack = newFakeSlack(r.now, r.o.Seed)
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
	if err := r.approvals(ctx, o); err != nil {
		return err
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
	// Each arbiter on its own node, in order: shuffled, both sometimes shared one, and a cut of
	// that node left no arbiter able to lead although two nodes kept quorum.
	nc, js, err := r.cl.connect(cctx, bus.RoleArbiter, "soak-"+a.id, a.node, nats.DontRandomize())
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
	port, err := freePort()
	if err != nil {
		nc.Close()
		return err
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	a.endpoint = "http://" + listen + "/slack/interactions"
	sys, err := system.New(ctx, system.Options{Arbiter: o, StandBy: true, SlackListen: listen,
		Slack: slack.Config{Channel: slackChannel, BotToken: slackToken, SigningSecret: slackSecret, APIURL: r.slack.url}})
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
	if r.run.faults && !r.warm {
		r.warm = true
		r.faults = append(r.faults, slackFault(r.o.Seed, t))
	}
	defer r.pace(time.Now(), t)
	if l := r.leader(); l != nil {
		r.slack.clickDue(ctx, l.endpoint, r.holds.held)
	}
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
	up := r.slack.srv.Answering()
	if up {
		r.awaitAsked(ctx) // before the lead is made sure of: the wait must not let a lease lapse unseen
	}
	r.fail(r.ensureLeader(ctx))
	r.watchReady(ctx, t)
	if up {
		r.holds.checkStale(r.now())
	}
}

// approvals puts the soak's approval policy in the budget bucket (unless the run goes without
// approvals) and starts following the books for the holds it makes.
func (r *rig) approvals(ctx context.Context, o arbiter.Options) error {
	if len(o.Config.Workloads) == 0 {
		return errors.New("soak: the replay's fleet has no workload")
	}
	if !r.o.NoApprovals {
		st, err := budget.OpenStore(ctx, r.js)
		if err != nil {
			return err
		}
		if _, err := st.Put(ctx, approvalPolicy(o.Config.Workloads[0].Name), "soak", o.Clock.Now()); err != nil {
			return fmt.Errorf("setting the soak's approval policy: %w", err)
		}
	}
	var err error
	r.holds, err = r.watchHolds(ctx)
	return err
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
	var drained map[string]bool
	var lost []string
	if r.act != nil {
		var err error
		drained, lost, err = r.drainHolds(ctx)
		r.fail(err)
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
		fate := fates{}
		r.fail(r.checkRecorded(ctx, fate.add))
		r.rec.stop()
		if r.holds != nil {
			r.fail(r.checkHolds(ctx, fate, drained, lost))
		}
	}
	if r.holds != nil {
		r.holds.stop()
	}
	if r.slack != nil {
		r.slack.close()
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
