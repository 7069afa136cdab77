// Package arbiter is Bursar's control loop. Every arbiter folds the event streams (prices, reclaim
// notices, telemetry, what runs) into one view of the market; the one holding the leader lease
// plans placement on that view, records each action in JetStream before and after it calls an
// actuator, and publishes plan.decided and action.updated. A standby keeps the same view warm and
// takes over when the lease expires, resuming the actions its predecessor left in flight.
package arbiter

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

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Options configure a Service. Zero fields take the defaults documented on them.
type Options struct {
	Config   *fleet.Config
	JS       jetstream.JetStream
	Actuator actuate.Actuator // usually an actuate.Router; a Reporter too, to publish replica.state
	Log      *slog.Logger
	Registry prometheus.Registerer // nil: metrics are kept but not registered
	Clock    Clock                 // default: the wall clock
	Gate     Gate                  // default: NoGate
	Caps     Caps                  // default: NoCaps
	Policy   placement.Policy
	Books    BookStore // default: the placement bucket (KVBooks)
	// OnCorrupt, when set, is told of each value in the arbiter's buckets that does not decode
	// (besides the error log and bursar_arbiter_corrupt_values_total); the system posts it to
	// Slack. It must not block.
	OnCorrupt func(Corruption)

	// Identity names this arbiter in the lease (default hostname-pid). An arbiter restarted under
	// the same identity takes its own unexpired lease back at once.
	Identity  string
	Partition string        // lease key; default "arbiter"
	LeaseTTL  time.Duration // must match the leases bucket's TTL (bus.Options.LeaseTTL); default 10s

	Debounce          time.Duration // wait after a price or demand change before planning (default 1s)
	Interval          time.Duration // plan at least this often (default 30s)
	ReportEvery       time.Duration // poll the actuator and publish replica.state (default 15s)
	Workers           int           // actuator calls in parallel per location, one workload at a time each (default 4)
	MarketLookback    time.Duration // prices replayed at start (default 7h: one collector snapshot)
	TelemetryLookback time.Duration // samples replayed at start (default 10m)
}

func (o *Options) defaults() error {
	if o.Config == nil || o.JS == nil || o.Actuator == nil {
		return errors.New("arbiter needs a fleet config, JetStream and an actuator")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Gate == nil {
		o.Gate = NoGate{}
	}
	if o.Caps == nil {
		o.Caps = NoCaps{}
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = host + "-" + strconv.Itoa(os.Getpid())
	}
	if err := checkIdentity(o.Identity); err != nil {
		return err
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.Partition == "" {
		o.Partition = "arbiter"
	}
	def(&o.LeaseTTL, 10*time.Second)
	def(&o.Debounce, time.Second)
	def(&o.Interval, 30*time.Second)
	def(&o.ReportEvery, 15*time.Second)
	def(&o.MarketLookback, 7*time.Hour)
	def(&o.TelemetryLookback, 10*time.Minute)
	if o.Workers <= 0 {
		o.Workers = 4
	}
	return nil
}

// Service is one arbiter. Its parts keep their own state and locks, so that the path from a
// reclaim notice to its actuator call never waits for a full pass's planning, a KV write or the
// price fold (it shares only mu with a full pass, which holds it for work in memory: settling the
// books, taking their snapshot, installing a plan, a few milliseconds on a thousand workloads):
//   - the market view (market: offers without a lock, telemetry, and the rest under its own mu),
//     folded by every arbiter;
//   - leadership: the lease (its own lock), renewed by leaseLoop alone, and isLeader, read
//     without any lock;
//   - the books (mu, held only for work in memory), written by flush and the saver outside mu,
//     one slot per book;
//   - execution: the executor (exec.go), which owns the workers' queues and each call's life
//     and asks the books (actionBooks) for the actions to run and to record their outcomes;
//   - planning: planMu lets one full pass run at a time, planning without mu, and guards what
//     only full passes keep (unplaced).
type Service struct {
	o     Options
	log   *slog.Logger
	m     *metrics
	mk    *market
	pub   *bus.Publisher
	store BookStore
	lease *lease
	// corrupt reports values in the buckets that are not what their keys hold (corrupt.go).
	corrupt *corruptions

	// urgent wakes the loop at once (a reclaim); changed wakes it after the debounce. fullReq asks
	// planLoop for a full pass, with its trigger: full passes run there, so that the loop answers
	// a reclaim while a full plan is being computed.
	urgent  chan struct{}
	changed chan struct{}
	fullReq chan string
	// renewed tells the loop that leaseLoop renewed or tried to take the lease.
	renewed chan struct{}
	// planMu lets one full pass run at a time; it is taken before mu, never while holding it.
	planMu sync.Mutex
	// unplaced is what the full passes last warned of as placing nowhere; planMu guards it.
	unplaced unplaced
	// behind counts the inputs whose backlog is not folded yet. A leader plans only at 0, so a
	// fresh arbiter never acts on half a market.
	behind atomic.Int32
	// inputs are the followed subjects, set by follow before any message is folded.
	inputs   []*input
	isLeader atomic.Bool
	exec     *executor     // runs the books' actions: their calls, and the workers per location
	saveReq  chan struct{} // wakes the saver
	slots    sync.Map      // key → *sync.Mutex: one write of a book or job's run at a time (write)

	mu      sync.Mutex // guards the books while leading; never held across I/O
	books   map[string]*Book
	names   []string        // the books' workloads, sorted (workloadNames)
	unsaved map[string]bool // touched books the saver has not taken yet
	leading bool
	lead    uint64 // counts the times this arbiter took the lead, so a plan knows its books
	// epoch is the lease's epoch when this arbiter took the lead: every value it writes carries
	// it, and a write under any other is refused (write).
	epoch uint64
	// planner is the last full pass's planner, kept to answer reclaims quickly; known is what it
	// knows of the books' replicas, and newObs the reclaims it has not been told of.
	planner *placement.Planner
	known   map[string]placement.Replica
	newObs  []placement.OfferObservation
	// targets are the ready replicas each workload needed when planner was made (restoring).
	targets map[string]int
	// truth is which report last observed each group; reportSeq numbers the reports.
	truth     truth
	reportSeq atomic.Uint64
	// jobs are the deadline-bound jobs (bursar.yaml's and submitted ones; see jobs.go); s.mu
	// guards them. jobsSave wakes the job loop to write what changed.
	jobs     jobs
	jobsSave chan struct{}
	runs     jobKV // the jobs bucket
	// badSpecs are the submission keys found holding something else, by the revision found;
	// the leader writes the job's submission back over them (restoreSpecs). s.mu guards it.
	badSpecs map[string]uint64
}

// New builds a service; Run starts it.
func New(ctx context.Context, o Options) (*Service, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if err := checkPayload(o.Config, o.JS.Conn().MaxPayload()); err != nil {
		return nil, err
	}
	pkv, err := o.JS.KeyValue(ctx, bus.BucketPlacement)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s (run bus.Ensure first): %w", bus.BucketPlacement, err)
	}
	lkv, err := o.JS.KeyValue(ctx, bus.BucketLeases)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s: %w", bus.BucketLeases, err)
	}
	jkv, err := o.JS.KeyValue(ctx, bus.BucketJobs)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s (run bus.Ensure first): %w", bus.BucketJobs, err)
	}
	log := o.Log.With("arbiter", o.Identity)
	corrupt := newCorruptions(o.Registry, log.Error, o.OnCorrupt)
	store := o.Books
	if store == nil {
		store = KVBooks{KV: pkv, OnCorrupt: corrupt.report}
	}
	s := &Service{o: o, log: log, m: newMetrics(o.Registry), mk: newMarket(o.Config),
		pub: bus.NewPublisher(o.JS), store: store, lease: newLease(lkv, o.Partition, o.Identity, o.LeaseTTL),
		corrupt: corrupt, urgent: make(chan struct{}, 1), changed: make(chan struct{}, 1), fullReq: make(chan string, 1),
		renewed: make(chan struct{}, 1), saveReq: make(chan struct{}, 1), unsaved: map[string]bool{}, truth: newTruth(),
		jobs: jobs{}, jobsSave: make(chan struct{}, 1), runs: jobKV{kv: jkv, report: corrupt.report}, badSpecs: map[string]uint64{}}
	s.lease.onCorrupt = corrupt.report
	s.exec = newExecutor(s, o.Actuator, log, s.m, o.Workers)
	return s, nil
}

// Run follows the streams and, while leading, plans and acts, until ctx ends. A graceful stop
// hands the lease back so a standby takes over at once.
func (s *Service) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.follow(ctx); err != nil {
		return err
	}
	jl, err := s.openJobs(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	s.exec.start(ctx, &wg)
	wg.Go(func() { s.reportLoop(ctx) })
	wg.Go(func() { s.planLoop(ctx) })
	wg.Go(func() { s.saveLoop(ctx) })
	wg.Go(func() { s.jobLoop(ctx, jl) })
	wg.Go(func() { s.leaseLoop(ctx) })
	err = s.loop(ctx)
	cancel()
	wg.Wait()
	s.stepDown()
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	s.lease.release(rctx)
	rcancel()
	return err
}

// loop follows the lease and plans: at once after a reclaim, after the debounce following other
// changes, and every Interval. Reclaims are answered here; full passes are handed to planLoop, so
// a reclaim never waits for a full plan to be computed. The lease is renewed by leaseLoop; the
// loop steps up or down after each renewal.
func (s *Service) loop(ctx context.Context) error {
	interval := time.NewTicker(s.o.Interval)
	defer interval.Stop()
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.renewed:
			_, held := s.lease.valid()
			s.followLease(ctx, held)
		case <-s.urgent:
			s.answer(ctx)
		case <-s.changed:
			if debounce == nil {
				debounce = time.After(s.o.Debounce)
			}
		case <-debounce:
			debounce = nil
			s.requestFull("change")
		case <-interval.C:
			s.requestFull("timer")
		}
	}
}

// requestFull asks planLoop for a full pass; one already asked for and not begun stands for it.
func (s *Service) requestFull(trigger string) {
	select {
	case s.fullReq <- trigger:
	default:
	}
}

// planLoop runs the full passes the loop asks for, one at a time.
func (s *Service) planLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case trigger := <-s.fullReq:
			s.pass(ctx, trigger)
		}
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// leaseLoop renews or acquires the lease every quarter TTL, on a goroutine of its own that takes
// no other lock: a pass holding the books (a slow gate) or the loop (a quick pass) never delays a
// renewal. It tells the loop after each, which steps up or down.
func (s *Service) leaseLoop(ctx context.Context) {
	renew := time.NewTicker(s.o.LeaseTTL / 4)
	defer renew.Stop()
	for {
		s.lease.tick(ctx)
		signal(s.renewed)
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
		}
	}
}

// keepLease renews or acquires the lease, and steps up or down accordingly (Step's round).
func (s *Service) keepLease(ctx context.Context) { s.followLease(ctx, s.lease.tick(ctx)) }

// followLease steps up or down as the lease is held or not.
func (s *Service) followLease(ctx context.Context, held bool) {
	s.mu.Lock()
	was := s.leading
	s.mu.Unlock()
	switch {
	case held && !was:
		if err := s.stepUp(ctx); err != nil {
			s.log.Error("taking the lead failed; will retry", "err", err)
			s.lease.release(ctx)
		}
	case !held && was:
		s.log.Warn("lost the leader lease; stopping all actions")
		s.stepDown()
	}
}

// stepUp loads every book and job's run, resumes the actions left in flight and asks again about
// the actions held for approval.
func (s *Service) stepUp(ctx context.Context) error {
	bs, err := s.store.Load(ctx)
	if err != nil {
		return err
	}
	for _, b := range bs {
		b.ver, b.saved = 0, 0 // as read: durable
	}
	runs, err := s.runs.loadRuns(ctx)
	if err != nil {
		return err
	}
	epoch, _ := s.lease.valid()
	s.mu.Lock()
	s.books, s.names, s.planner = bs, nil, nil
	s.takeRuns(runs)
	clear(s.unsaved)
	s.setLeading(true)
	s.lead++
	s.epoch = epoch
	holds := s.holds()
	s.ask(ctx, holds) // questions asked by an earlier leader: resumed with their deadlines
	s.mu.Unlock()
	s.log.Info("leading", "epoch", epoch, "workloads", len(bs), "approvals_pending", len(holds))
	if rep, ok := s.o.Actuator.(actuate.Reporter); ok {
		s.report(ctx, rep) // what runs, before the first plan: the actuator's truth wins
	}
	for w, b := range bs {
		if len(b.Actions) > 0 {
			s.exec.dispatch(w)
		}
	}
	signal(s.urgent)
	return nil
}

func (s *Service) stepDown() {
	s.mu.Lock()
	s.depose()
	s.mu.Unlock()
}

// Leading reports whether this arbiter holds the lease now. It takes no lock of the books.
func (s *Service) Leading() bool {
	_, ok := s.lease.valid()
	return ok && s.isLeader.Load()
}
