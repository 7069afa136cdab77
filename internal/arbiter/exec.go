package arbiter

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/backoff"
)

// maxTries is how often an action is tried before it is given up as failed.
const maxTries = 5

// actionBooks is what the executor needs of the books it runs actions from (books.go): they say
// where a workload has actions to run, record durably that an action's actuator is about to be
// called, and record how the call went.
type actionBooks interface {
	// locationsToRun lists the locations where workload has actions to run.
	locationsToRun(workload string) []locationToRun
	// begin takes the workload's first runnable action that in accepts and records, durably,
	// that its actuator is about to be called; ok is false when there is none or the arbiter no
	// longer leads. resumed says the action was already being called: a call may have gone through.
	begin(ctx context.Context, workload string, in func(Record) bool) (rec Record, resumed, ok bool)
	// end records how the call went, as the executor judged it, and announces it once durable.
	// held says the books still held the action; more that the workload may have more to run now.
	end(ctx context.Context, workload string, rec Record, out callOutcome, callErr error, label string) (held, more bool)
}

var _ actionBooks = (*books)(nil)

// locationToRun is a location where a workload has an action to run; first when one of them
// answers a reclaim.
type locationToRun struct {
	location string
	first    bool
}

// callOutcome is how an actuator call ended, as the executor judges it.
type callOutcome int

const (
	callApplied callOutcome = iota // the actuator did what the action asked
	callRetry                      // it failed, and the action is tried again
	callGivenUp                    // it failed for good (not found, or maxTries tries)
)

// executor runs the books' actions through their actuator calls. It owns the call's life
// (calling, then applied, tried again after a wait the actuator may ask for, or given up) and,
// once started, the workers: actions run per workload and location. Each location has workers of
// its own, and all of a workload's actions in one location go to the same one of them, so they
// run one at a time and in the order recorded: each sets the group's count, and the last
// recorded is the count wanted. Locations do not wait on each other: a location whose actuator
// hangs or fails holds only its own workers, and a reclaim's replacement elsewhere goes ahead.
// Nothing is lost by that: the planner emits a drain only once enough other replicas are ready
// (make-before-break), not relying on the order of calls, and each call is recorded before it is
// made (idempotency).
type executor struct {
	books   actionBooks
	act     actuate.Actuator
	log     *slog.Logger
	m       *metrics
	workers int

	// Set by start; without it (Step), actions are run by the caller and dispatch does nothing.
	ctx   context.Context
	wg    *sync.WaitGroup
	route *queue // workloads dispatched, for the router to hand to their locations

	mu sync.Mutex
	at map[string][]*queue // per location, its workers' queues
}

func newExecutor(books actionBooks, act actuate.Actuator, log *slog.Logger, m *metrics, workers int) *executor {
	return &executor{books: books, act: act, log: log, m: m, workers: workers, at: map[string][]*queue{}}
}

// start starts the router, which makes the locations' workers as their first action comes. It is
// called before anything is dispatched.
func (e *executor) start(ctx context.Context, wg *sync.WaitGroup) {
	e.ctx, e.wg, e.route = ctx, wg, newQueue()
	wg.Go(e.router)
}

// dispatch queues a workload for the workers of the locations its actions are in. It takes no
// lock of the books, so callers may hold them.
func (e *executor) dispatch(workload string) { e.enqueue(workload, false) }

// dispatchFirst queues a workload at the front: its reclaim answers go first in their locations.
func (e *executor) dispatchFirst(workload string) { e.enqueue(workload, true) }

func (e *executor) enqueue(workload string, first bool) {
	if e.route == nil {
		return // stepped by the caller (Step), no workers
	}
	e.route.push(workload, first)
}

// router hands each dispatched workload to the workers of the locations where it has actions to
// run. It asks the books itself, so dispatch needs no lock.
func (e *executor) router() {
	for {
		w, ok := e.route.pop(e.ctx)
		if !ok {
			return
		}
		for _, l := range e.books.locationsToRun(w) {
			e.lane(l.location, w).push(w, l.first)
		}
	}
}

// lane is the queue of the worker of location that runs workload's actions there, started with
// the location's other workers the first time the location has work.
func (e *executor) lane(location, workload string) *queue {
	e.mu.Lock()
	defer e.mu.Unlock()
	qs, ok := e.at[location]
	if !ok {
		qs = make([]*queue, e.workers)
		for i := range qs {
			qs[i] = newQueue()
			e.wg.Go(func() { e.work(location, qs[i]) })
		}
		e.at[location] = qs
	}
	h := fnv.New32a()
	h.Write([]byte(workload))
	return qs[h.Sum32()%uint32(len(qs))]
}

// work is one worker of a location: it runs the location's actions of each workload it is given
// until none is left, waiting between tries as long as the actuator asked (Retry-After).
func (e *executor) work(location string, q *queue) {
	for {
		w, ok := q.pop(e.ctx)
		if !ok {
			return
		}
		for {
			more, wait := e.stepAt(e.ctx, w, location)
			if !more || backoff.Sleep(e.ctx, wait) != nil {
				break
			}
		}
	}
}

// step runs the workload's first runnable action, in any location, through its life once. It
// reports whether the workload may have more to run now.
func (e *executor) step(ctx context.Context, workload string) bool {
	more, _ := e.run(ctx, workload, func(Record) bool { return true })
	return more
}

// stepAt is step for the workload's actions in one location. wait is how long the actuator asked
// to be left alone before the next try (Retry-After), 0 when it did not ask.
func (e *executor) stepAt(ctx context.Context, workload, location string) (more bool, wait time.Duration) {
	return e.run(ctx, workload, func(r Record) bool { return r.Target.Location == location })
}

// run takes the workload's first runnable action that in accepts through its life once.
func (e *executor) run(ctx context.Context, workload string, in func(Record) bool) (more bool, wait time.Duration) {
	rec, resumed, ok := e.books.begin(ctx, workload, in)
	if !ok {
		return false, 0
	}
	if resumed && e.alreadyApplied(ctx, rec) {
		_, more := e.books.end(ctx, workload, rec, callApplied, nil, "reconciled")
		return more, 0
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	err := e.act.Scale(cctx, rec.Target)
	cancel()
	out := judge(rec, err)
	held, more := e.books.end(ctx, workload, rec, out, err, "applied")
	if held && out == callRetry {
		e.log.Warn("actuator call failed; will retry", "action", rec.Target.ActionID, "group", rec.Target.Group.String(),
			"try", rec.Tries, "err", err)
		e.m.actions.WithLabelValues(rec.Target.Kind, "retried").Inc()
	}
	return more, askedWait(err)
}

// judge says how a call that returned callErr ended: an action the actuator does not know, or
// tried maxTries times, is given up.
func judge(rec Record, callErr error) callOutcome {
	switch {
	case callErr == nil:
		return callApplied
	case errors.Is(callErr, actuate.ErrNotFound) || rec.Tries >= maxTries:
		return callGivenUp
	default:
		return callRetry
	}
}

// alreadyApplied asks the actuator whether an interrupted call went through.
func (e *executor) alreadyApplied(ctx context.Context, rec Record) bool {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, err := e.act.Desired(cctx, rec.Target.Group)
	return err == nil && n == rec.Target.Replicas
}
