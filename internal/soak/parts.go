package soak

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/store"
)

// actuated is the replay's actuator: it scales and reports.
type actuated interface {
	actuate.Actuator
	actuate.Reporter
}

// counted is the market's actuator, counting each action id's calls.
type counted struct {
	actuated
	mu    sync.Mutex
	calls map[string]int
}

func newCounted(a actuated) *counted { return &counted{actuated: a, calls: map[string]int{}} }

func (c *counted) Scale(ctx context.Context, t actuate.Target) error {
	if err := c.actuated.Scale(ctx, t); err != nil {
		return err
	}
	c.mu.Lock()
	c.calls[t.ActionID]++
	c.mu.Unlock()
	return nil
}

// doubled counts the action ids applied more than once, and all ids applied.
func (c *counted) doubled() (doubled, actions int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.calls {
		if n > 1 {
			doubled++
		}
	}
	return doubled, len(c.calls)
}

// callCounts copies how often each action id reached the actuator.
func (c *counted) callCounts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// gate is one arbiter process's way to the actuator: a killed process calls nothing more.
type gate struct {
	*counted
	dead atomic.Bool
}

var errKilled = errors.New("soak: the arbiter process was killed")

func (g *gate) kill() { g.dead.Store(true) }

func (g *gate) Scale(ctx context.Context, t actuate.Target) error {
	if g.dead.Load() {
		return errKilled
	}
	return g.counted.Scale(ctx, t)
}

func (g *gate) Observe(ctx context.Context) ([]actuate.Observed, error) {
	if g.dead.Load() {
		return nil, errKilled
	}
	return g.counted.Observe(ctx)
}

// slowBooks is the placement bucket with writes that take delay while the KV fault is on.
type slowBooks struct {
	arbiter.KVBooks
	delay *atomic.Int64 // nanoseconds
}

func (r *rig) slow(kv jetstream.KeyValue) *slowBooks {
	if r.books == nil {
		r.books = &slowBooks{delay: new(atomic.Int64)}
	}
	return &slowBooks{KVBooks: arbiter.KVBooks{KV: kv}, delay: r.books.delay}
}

func (s *slowBooks) Save(ctx context.Context, b *arbiter.Book) error {
	if d := time.Duration(s.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.KVBooks.Save(ctx, b)
}

// faultyStore is the history store, refusing every insert while the store fault is on.
type faultyStore struct {
	*store.Store
	failing atomic.Bool
	refused atomic.Int64
}

var errStoreDown = errors.New("soak: the history store refuses writes")

func (f *faultyStore) Insert(ctx context.Context, table, columns, token string, rows []byte) error {
	if f.failing.Load() {
		f.refused.Add(1)
		return errStoreDown
	}
	return f.Store.Insert(ctx, table, columns, token, rows)
}
