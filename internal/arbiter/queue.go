package arbiter

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"sync"
	"time"
)

// queue is one worker's workloads with actions to run. It is a set, so a workload queued twice
// runs once, and it is never full: a pass over ten thousand workloads queues them all, where a
// bounded channel dropped those beyond its size until some later pass.
type queue struct {
	mu   sync.Mutex
	todo []string
	in   map[string]bool
	wake chan struct{}
}

func newQueue() *queue { return &queue{in: map[string]bool{}, wake: make(chan struct{}, 1)} }

// push queues w at the back, or at the front when first (a reclaim's replacement); a w queued
// already moves to the front when first.
func (q *queue) push(w string, first bool) {
	q.mu.Lock()
	switch {
	case !q.in[w] && first:
		q.todo = slices.Insert(q.todo, 0, w)
	case !q.in[w]:
		q.todo = append(q.todo, w)
	case first:
		if i := slices.Index(q.todo, w); i > 0 {
			q.todo = slices.Insert(slices.Delete(q.todo, i, i+1), 0, w)
		}
	}
	q.in[w] = true
	q.mu.Unlock()
	signal(q.wake)
}

// pop takes the workload at the front, waiting for one until ctx ends.
func (q *queue) pop(ctx context.Context) (string, bool) {
	for {
		q.mu.Lock()
		if len(q.todo) > 0 {
			w := q.todo[0]
			q.todo = q.todo[1:]
			delete(q.in, w)
			q.mu.Unlock()
			return w, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", false
		case <-q.wake:
		}
	}
}

// lanes runs actions per workload and location. Each location has Workers of its own, and all of
// a workload's actions in one location go to the same one of them, so they run one at a time and
// in the order recorded: each sets the group's count, and the last recorded is the count wanted.
// Locations do not wait on each other: a location whose actuator hangs or fails holds only its
// own workers, and a reclaim's replacement elsewhere goes ahead. Nothing is lost by that: the
// planner emits a drain only once enough other replicas are ready (make-before-break), not
// relying on the order of calls, and each call is recorded before it is made (idempotency).
type lanes struct {
	svc     *Service
	ctx     context.Context
	wg      *sync.WaitGroup
	workers int
	route   *queue // workloads dispatched, for the router to hand to their locations
	mu      sync.Mutex
	at      map[string][]*queue // per location, its workers' queues
}

// startWorkers starts the router and makes the locations' workers as their first action comes.
func (s *Service) startWorkers(ctx context.Context, wg *sync.WaitGroup) {
	s.work = &lanes{svc: s, ctx: ctx, wg: wg, workers: s.o.Workers, route: newQueue(), at: map[string][]*queue{}}
	wg.Go(func() { s.router(ctx) })
}

// dispatch queues a workload for the workers of the locations its actions are in.
func (s *Service) dispatch(workload string) { s.enqueue(workload, false) }

// dispatchFirst queues a workload at the front: its reclaim answers go first in their locations.
func (s *Service) dispatchFirst(workload string) { s.enqueue(workload, true) }

func (s *Service) enqueue(workload string, first bool) {
	if s.work == nil {
		return // stepped by the caller (Step), no workers
	}
	s.work.route.push(workload, first)
}

// router hands each dispatched workload to the workers of the locations where it has actions to
// run. It reads the book itself, so dispatch needs no lock and callers may hold s.mu.
func (s *Service) router(ctx context.Context) {
	for {
		w, ok := s.work.route.pop(ctx)
		if !ok {
			return
		}
		for _, l := range s.locationsToRun(w) {
			s.work.lane(l.location, w).push(w, l.first)
		}
	}
}

// locationToRun is a location where a workload has an action to run; first when one of them
// answers a reclaim.
type locationToRun struct {
	location string
	first    bool
}

func (s *Service) locationsToRun(w string) []locationToRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[w]
	if b == nil {
		return nil
	}
	var out []locationToRun
	for _, r := range b.Actions {
		if r.Stage == StageAwaiting {
			continue
		}
		first := !r.Received.IsZero()
		i := slices.IndexFunc(out, func(l locationToRun) bool { return l.location == r.Target.Location })
		if i < 0 {
			out = append(out, locationToRun{location: r.Target.Location, first: first})
		} else {
			out[i].first = out[i].first || first
		}
	}
	return out
}

// lane is the queue of the worker of location that runs workload's actions there, started with
// the location's other workers the first time the location has work.
func (l *lanes) lane(location, workload string) *queue {
	l.mu.Lock()
	defer l.mu.Unlock()
	qs, ok := l.at[location]
	if !ok {
		qs = make([]*queue, l.workers)
		for i := range qs {
			qs[i] = newQueue()
			l.wg.Go(func() { l.run(location, qs[i]) })
		}
		l.at[location] = qs
	}
	h := fnv.New32a()
	h.Write([]byte(workload))
	return qs[h.Sum32()%uint32(len(qs))]
}

// run is one worker of a location: it runs the location's actions of each workload it is given
// until none is left, waiting between tries as long as the actuator asked (Retry-After).
func (l *lanes) run(location string, q *queue) {
	s := l.svc
	for {
		w, ok := q.pop(l.ctx)
		if !ok {
			return
		}
		for {
			more, wait := s.stepAt(l.ctx, w, location)
			if !more || sleep(l.ctx, wait) != nil {
				break
			}
		}
	}
}

// retryAfter is an actuator error that says how long to wait before the next try.
type retryAfter interface{ RetryAfterDelay() time.Duration }

// askedWait is the wait callErr asks for before the action is tried again, 0 when none.
func askedWait(callErr error) time.Duration {
	var ra retryAfter
	if errors.As(callErr, &ra) {
		return max(ra.RetryAfterDelay(), 0)
	}
	return 0
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
