// Package arbiter is Bursar's control loop. Every arbiter folds the event streams (prices, reclaim
// notices, telemetry, what runs) into one view of the market; the one holding the leader lease
// plans placement on that view, records each action in JetStream before and after it calls an
// actuator, and publishes plan.decided and action.updated. A standby keeps the same view warm and
// takes over when the lease expires, resuming the actions its predecessor left in flight.
package arbiter

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/jobs"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Service is one arbiter: the loops, and the parts they drive, each the one owner of its state
// (see docs/architecture.md):
//   - the market view (market.go), folded from the inputs (follow.go) by every arbiter;
//   - the lease (lease.go), renewed by leaseLoop alone, never behind a plan;
//   - the books (books.go): the ledger in memory, under the one lock of the leader's state,
//     and its only writer to the placement and jobs buckets, every write fenced by the lease's
//     epoch and a compare-and-set;
//   - the responder (responder.go), which answers a reclaim from the last full pass's planner;
//   - the executor (exec.go), which owns the workers' queues and each actuator call's life;
//   - the announcer (announce.go), which publishes what the arbiter did.
//
// loop answers reclaims (quick) and asks planLoop for full passes, which plan without holding the
// books, so that a reclaim is never answered behind a full plan being computed.
type Service struct {
	o     Options
	log   *slog.Logger
	m     *metrics
	mk    *market
	in    *inputs
	bk    *books
	lease *lease
	exec  *executor
	ann   *announcer
	// corrupt reports values in the buckets that are not what their keys hold (corrupt.go).
	corrupt *corruptions
	// empties are the empty groups whose state was published lately (report.go).
	empties empties

	// urgent wakes the loop at once (a reclaim); changed wakes it after the debounce. fullReq asks
	// planLoop for a full pass, with its trigger. renewed tells the loop that leaseLoop renewed or
	// tried to take the lease.
	urgent  chan struct{}
	changed chan struct{}
	fullReq chan string
	renewed chan struct{}
	// planMu lets one full pass run at a time; it is taken before the books' lock, never while
	// holding it. unplaced is what the full passes last warned of as placing nowhere; planMu
	// guards it.
	planMu   sync.Mutex
	unplaced unplaced
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
		lease: newLease(lkv, o.Partition, o.Identity, o.LeaseTTL), corrupt: corrupt,
		urgent: make(chan struct{}, 1), changed: make(chan struct{}, 1), fullReq: make(chan string, 1),
		renewed: make(chan struct{}, 1)}
	s.lease.onCorrupt = corrupt.report
	s.ann = &announcer{pub: bus.NewPublisher(o.JS), log: log, clock: o.Clock, actor: "arbiter/" + o.Identity}
	l := &ledger{cfg: o.Config, clock: o.Clock, gate: o.Gate, act: o.Actuator, policy: o.Policy, interval: o.Interval,
		mk: s.mk, m: s.m, log: log, ann: s.ann, corrupt: corrupt, saveReq: make(chan struct{}, 1),
		jobsSave: make(chan struct{}, 1), unsaved: map[string]bool{}, truth: newTruth(), jobs: jobTable{},
		badSpecs: map[string]uint64{}}
	s.bk = &books{l: l, cfg: o.Config, clock: o.Clock, saveReq: l.saveReq, jobsSave: l.jobsSave, store: store, runs: jobs.KV{KV: jkv, OnCorrupt: corrupt.reportEntry}, lease: s.lease, gate: o.Gate,
		ann: s.ann, m: s.m, log: log, leaseTTL: o.LeaseTTL}
	s.exec = newExecutor(s.bk, o.Actuator, log, s.m, o.Workers)
	l.exec = s.exec
	s.in = &inputs{js: o.JS, mk: s.mk, bk: s.bk, m: s.m, log: log, clock: o.Clock, urgent: s.urgent, changed: s.changed,
		marketLookback: o.MarketLookback, telemetryLookback: o.TelemetryLookback, demandLookback: o.DemandLookback}
	return s, nil
}

// Run follows the streams and, while leading, plans and acts, until ctx ends. A graceful stop
// hands the lease back so a standby takes over at once.
func (s *Service) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.in.follow(ctx); err != nil {
		return err
	}
	jl, err := s.bk.openJobs(ctx, s.o.JS.Conn())
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	s.exec.start(ctx, &wg)
	wg.Go(func() { s.reportLoop(ctx) })
	wg.Go(func() { s.planLoop(ctx) })
	wg.Go(func() { s.bk.saveLoop(ctx) })
	wg.Go(func() { s.bk.jobLoop(ctx, jl, s.changed) })
	wg.Go(func() { s.leaseLoop(ctx) })
	err = s.loop(ctx)
	cancel()
	wg.Wait()
	s.bk.stepDown()
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

// full re-plans the whole estate. Planning 1,000 workloads takes far longer than answering a
// reclaim, so the plan is computed without holding the books: a reclaim arriving meanwhile is
// answered at once by quick. The plan is applied only if the books it was made from are unchanged;
// otherwise it is thrown away and made again, never applied over newer books (after lockedAfter
// tries, it plans holding them). The budget caps are read after the books are taken, without
// holding them (they may come from a slow store). Full passes run one at a time.
func (s *Service) full(ctx context.Context, trigger string, start time.Time) {
	s.planMu.Lock()
	defer s.planMu.Unlock()
	caps := func() []placement.Budget {
		caps, err := s.o.Caps.Caps(ctx)
		if err != nil {
			s.log.Warn("budget caps unavailable; planning without them", "err", err)
		}
		return caps
	}
	for try := 1; ; try++ {
		now := s.o.Clock.Now()
		var in planInput
		var d placement.Decision
		var holds []Hold
		done := true
		if try >= lockedAfter {
			caps := caps()
			s.bk.with(func(l *ledger) { d, holds, done = l.fullLocked(ctx, trigger, caps, now, start) })
			s.bk.askWhenSaved(ctx, holds)
			if done {
				s.unplaced.warn(s.log, d)
			}
			return
		}
		s.bk.with(func(l *ledger) { in, done = l.prepare(now) })
		if !done {
			return
		}
		in.snap.Budgets = caps()
		pl, err := placement.NewPlannerContext(ctx, in.snap, s.o.Policy, now)
		if err != nil {
			s.log.Info("planning stopped", "trigger", trigger, "err", err)
			return
		}
		d = pl.Decision()
		leading := false
		s.bk.with(func(l *ledger) {
			holds, done = l.install(ctx, in, pl, d, now, trigger, start)
			leading = l.leading
		})
		s.bk.askWhenSaved(ctx, holds)
		if done {
			if leading {
				s.unplaced.warn(s.log, d)
			}
			return
		}
		s.m.dropped.Inc()
		s.log.Debug("the books changed while planning; planning again", "trigger", trigger, "try", try)
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

// followLease steps up or down as the lease is held or not.
func (s *Service) followLease(ctx context.Context, held bool) {
	switch was := s.bk.leads(); {
	case held && !was:
		if err := s.stepUp(ctx); err != nil {
			s.log.Error("taking the lead failed; will retry", "err", err)
			s.lease.release(ctx)
		}
	case !held && was:
		s.log.Warn("lost the leader lease; stopping all actions")
		s.bk.stepDown()
	}
}

// stepUp loads every book and job's run, resumes the actions left in flight and asks again about
// the actions held for approval.
func (s *Service) stepUp(ctx context.Context) error {
	resume, holds, err := s.bk.takeLead(ctx)
	if err != nil {
		return err
	}
	ask(ctx, s.o.Gate, holds) // questions asked by an earlier leader: resumed with their deadlines
	if rep, ok := s.o.Actuator.(actuate.Reporter); ok {
		s.report(ctx, rep) // what runs, before the first plan: the actuator's truth wins
	}
	for _, w := range resume {
		s.exec.dispatch(w)
	}
	signal(s.urgent)
	return nil
}

// Leading reports whether this arbiter holds the lease now. It takes no lock of the books.
func (s *Service) Leading() bool {
	_, ok := s.lease.valid()
	return ok && s.bk.leads()
}
