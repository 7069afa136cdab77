package arbiter

import (
	"context"
	"errors"
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
