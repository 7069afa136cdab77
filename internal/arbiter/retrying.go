package arbiter

import (
	"context"
	"sync"
	"time"
)

// retrying is work handed to a loop off the caller's path (approval asks, budget alerts): the
// loop takes what is queued as it comes, and what failed is tried again, first, every askRetry.
type retrying[T any] struct {
	mu    sync.Mutex
	items []T
	wake  chan struct{}
}

func newRetrying[T any]() *retrying[T] { return &retrying[T]{wake: make(chan struct{}, 1)} }

func (q *retrying[T]) add(items ...T) {
	q.mu.Lock()
	q.items = append(q.items, items...)
	q.mu.Unlock()
	signal(q.wake)
}

// run hands the queued items to do until ctx ends; do returns those to try again.
func (q *retrying[T]) run(ctx context.Context, do func(context.Context, []T) []T) {
	t := time.NewTicker(askRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-t.C:
		}
		q.mu.Lock()
		todo := q.items
		q.items = nil
		q.mu.Unlock()
		if again := do(ctx, todo); len(again) > 0 {
			q.mu.Lock()
			q.items = append(again, q.items...)
			q.mu.Unlock()
		}
	}
}
