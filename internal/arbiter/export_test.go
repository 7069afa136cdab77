package arbiter

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/actuate"
)

// Pass runs one planning pass now.
func (s *Service) Pass(ctx context.Context) { s.pass(ctx, "test") }

// Report polls the actuator once and folds what it says.
func (s *Service) Report(ctx context.Context) { s.report(ctx, s.o.Actuator.(actuate.Reporter)) }

// Kill stops the arbiter dead: no more writes, no lease renewal, no release.
func (s *Service) Kill() { s.kill() }

// StopAt kills the arbiter at a point of the first action's life: "before" the actuator call
// (after "calling" is recorded) or "after" it (before "applied" is recorded).
func (s *Service) StopAt(point string) {
	k := func(Record) error { return errKilled }
	switch point {
	case "before":
		s.hooks.beforeCall = k
	case "after":
		s.hooks.afterCall = k
	}
}

// InFlight counts the actions recorded and not finished (awaiting approval excluded).
func (s *Service) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range s.books {
		for _, r := range b.Actions {
			if r.Stage != StageAwaiting {
				n++
			}
		}
	}
	return n
}

// Dead says whether a hook killed the arbiter.
func (s *Service) Dead() bool { return s.killed() }

// KnowsPrice says whether the market view holds offer id at price p.
func (s *Service) KnowsPrice(id string, p float64) bool {
	s.mk.mu.Lock()
	defer s.mk.mu.Unlock()
	o, ok := s.mk.offers[id]
	return ok && o.PricePerHour == p
}

// KnowsNotice says whether the market view holds reclaim notice id.
func (s *Service) KnowsNotice(id string) bool {
	s.mk.mu.Lock()
	defer s.mk.mu.Unlock()
	_, ok := s.mk.notices[id]
	return ok
}

// Books returns a copy of the books (nil when not leading).
func (s *Service) Books() map[string]*Book {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]*Book{}
	for w, b := range s.books {
		out[w] = b.clone()
	}
	return out
}

// HoldFullPlans makes every full pass wait, once it has planned without holding the books and
// before it applies its plan, until release is called. held receives each time a pass waits.
func (s *Service) HoldFullPlans() (held <-chan struct{}, release func()) {
	ch, gate := make(chan struct{}, 16), make(chan struct{})
	h := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
		<-gate
	}
	s.hooks.planned.Store(&h)
	return ch, sync.OnceFunc(func() { s.hooks.planned.Store(nil); close(gate) })
}

// PlansDropped counts the full plans thrown away because the books changed while they were made.
func (s *Service) PlansDropped() float64 { return testutil.ToFloat64(s.m.dropped) }
