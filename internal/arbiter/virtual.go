package arbiter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
)

// Start follows the streams and takes the lead without starting any timer: the caller then drives
// the service round by round with Step, on a virtual clock (the replay, the demo), so a run is
// deterministic and as fast as the CPU allows. It returns once the backlog is folded.
func (s *Service) Start(ctx context.Context) error {
	if err := s.Join(ctx); err != nil {
		return err
	}
	if !s.Leading() {
		return fmt.Errorf("arbiter %s could not take the lead (lease %s is held)", s.o.Identity, s.o.Partition)
	}
	return nil
}

// Join is Start for an arbiter that may find another one leading: it then stands by, and the
// Step that finds the lease free takes the lead (the soak's standby).
func (s *Service) Join(ctx context.Context) error {
	if err := s.in.follow(ctx); err != nil {
		return err
	}
	jl, err := s.bk.openJobs(ctx, s.o.JS.Conn())
	if err != nil {
		return err
	}
	go s.bk.jobLoop(ctx, jl, s.changed)
	for s.in.behind.Load() > 0 {
		if err := pause(ctx); err != nil {
			return fmt.Errorf("reading the backlog: %w", err)
		}
	}
	s.followLease(ctx, s.lease.tick(ctx))
	return nil
}

// Step is one round of the loop, run by the caller: renew the lease, poll the actuator, make a
// full plan and carry every resulting action to its end before returning.
func (s *Service) Step(ctx context.Context) {
	s.followLease(ctx, s.lease.tick(ctx))
	if rep, ok := s.o.Actuator.(actuate.Reporter); ok && s.Leading() {
		s.report(ctx, rep)
	}
	s.pass(ctx, "step")
	var ws []string
	s.bk.with(func(l *ledger) { ws = slices.Clone(l.workloadNames()) })
	for _, w := range ws {
		for s.exec.step(ctx, w) {
		}
	}
	s.bk.saveAll(ctx) // what the round changed is durable before the next
}

// AwaitNotices waits until the reclaim notices with the given ids are folded into the market.
func (s *Service) AwaitNotices(ctx context.Context, ids []string) error {
	for _, id := range ids {
		for !s.mk.hasNotice(id) {
			if err := pause(ctx); err != nil {
				return fmt.Errorf("waiting for reclaim notice %s: %w", id, err)
			}
		}
	}
	return nil
}

// AwaitFolded waits until every input has folded the last message its stream holds on its
// subject: what the caller published (token counters, the replica states the last Step
// reported) is in the view the next Step plans on, so a stepped run does not depend on how fast
// the bus delivers. (A consumer's pending count is no such barrier: the server updates it late.)
func (s *Service) AwaitFolded(ctx context.Context) error {
	for _, in := range s.in.list {
		last, err := in.stream.GetLastMsgForSubject(ctx, in.subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for the arbiter's input %s: %w", in.subject, err)
		}
		for in.folded.Load() < last.Sequence {
			if err := pause(ctx); err != nil {
				return fmt.Errorf("waiting for the arbiter's input %s: %w", in.subject, err)
			}
		}
	}
	return nil
}

// pause yields briefly while waiting on the bus.
func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Microsecond):
		return nil
	}
}
