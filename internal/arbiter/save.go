package arbiter

import (
	"context"
	"sync"
	"time"
)

// Books are written off the books' lock. A change is made in memory under s.mu, and touch marks
// the book changed; flush writes its newest version outside s.mu, as write (fence.go) writes
// every value the leader keeps: one at a time per key, by a compare-and-set under the lease's
// epoch; writes of different books never wait for each other. A worker flushes its workload's
// book before it calls an actuator, so an action is durable before it is applied; the saver
// writes the other changed books in the background, several at once. So neither a full pass's thousand writes nor one slow write holds
// the books, delays a reclaim's replacement or the lease's renewal.

// saveWorkers is how many books the saver writes at once.
const saveWorkers = 8

// touch marks b changed and queues it for the saver; s.mu is held.
func (s *Service) touch(b *Book) {
	b.ver++
	s.unsaved[b.Workload] = true
	signal(s.saveReq)
}

// touchAll touches the books in dirty and queues for their workers those with actions to run;
// s.mu is held. Books answering a reclaim go to the front of their worker's queue: a reclaim on a
// crowded offer re-plans every workload running there, and the replacement should come first.
func (s *Service) touchAll(dirty map[string]bool) {
	for _, w := range sortedKeys(dirty) {
		b := s.books[w]
		if b == nil {
			continue
		}
		s.touch(b)
		switch {
		case hasAnswer(b):
			s.exec.dispatchFirst(w)
		case runnable(b):
			s.exec.dispatch(w)
		}
	}
}

func hasAnswer(b *Book) bool {
	for _, r := range b.Actions {
		if !r.Received.IsZero() && r.Stage != StageAwaiting {
			return true
		}
	}
	return false
}

func runnable(b *Book) bool {
	for _, r := range b.Actions {
		if r.Stage != StageAwaiting {
			return true
		}
	}
	return false
}

// flush writes workload w's book if it changed since its last write, and returns once it is
// durable. It is the leader's one way to write (write): a failed or refused write ends its lead.
func (s *Service) flush(ctx context.Context, w string) error {
	return s.write(ctx, bookPrefix+w, func(epoch uint64) (func(context.Context) error, func(), error) {
		b := s.books[w]
		if b == nil {
			return nil, nil, errNotLeading
		}
		if b.saved == b.ver {
			return nil, nil, nil
		}
		c := b.clone()
		c.Epoch = epoch
		save := func(ctx context.Context) error { return s.store.Save(ctx, c) }
		return save, func() { b.rev, b.saved, b.Epoch = c.rev, c.ver, epoch }, nil
	})
}

// saveLoop writes the touched books in the background while leading.
func (s *Service) saveLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.saveReq:
			s.saveAll(ctx)
		}
	}
}

// saveAll writes every touched book, saveWorkers at a time, and returns once each is durable or
// its write failed (flush logs that and ends the lead). It warns when writing them took a large
// part of the lease's TTL: the lease is renewed apart from the writes, but a store that slow will
// soon fail the compare-and-set races it needs.
func (s *Service) saveAll(ctx context.Context) {
	s.mu.Lock()
	todo := sortedKeys(s.unsaved)
	clear(s.unsaved)
	s.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	start := time.Now()
	queue := make(chan string)
	var wg sync.WaitGroup
	for range min(saveWorkers, len(todo)) {
		wg.Go(func() {
			for w := range queue {
				_ = s.flush(ctx, w)
			}
		})
	}
	for _, w := range todo {
		queue <- w
	}
	close(queue)
	wg.Wait()
	if took := time.Since(start); took > s.o.LeaseTTL/2 {
		s.log.Warn("writing the books took over half the lease's TTL; is the placement bucket slow?",
			"books", len(todo), "took", took.Round(time.Millisecond), "lease_ttl", s.o.LeaseTTL)
	}
}

// depose ends the lead after a failed or fenced write; s.mu is held.
func (s *Service) depose() {
	s.setLeading(false)
	s.books, s.names, s.planner = nil, nil, nil
}

// setLeading records whether this arbiter leads; s.mu is held. Leading reads the copy in isLeader
// without s.mu.
func (s *Service) setLeading(v bool) {
	s.leading = v
	s.isLeader.Store(v)
	if v {
		s.m.leader.Set(1)
	} else {
		s.m.leader.Set(0)
	}
}
