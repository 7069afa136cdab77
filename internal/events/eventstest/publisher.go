package eventstest

import (
	"context"
	"sync"

	"github.com/bursar-dev/bursar/internal/events"
)

// Publisher is a fake publisher for sources' tests: it stamps and validates what it is given, as
// the real one does, keeps the events of type T and fails while a failure is set.
type Publisher[T events.Event] struct {
	mu   sync.Mutex
	got  []T
	fail error
}

// Publish records e, or returns the failure set with SetFail.
func (p *Publisher[T]) Publish(_ context.Context, e events.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	if err := events.Validate(events.Stamp(e)); err != nil {
		return err
	}
	p.got = append(p.got, e.(T))
	return nil
}

// SetFail makes every Publish fail with err until it is set back to nil.
func (p *Publisher[T]) SetFail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = err
}

// Events returns a copy of what was published.
func (p *Publisher[T]) Events() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]T(nil), p.got...)
}
