package arbiter

import (
	"context"
	"sync"
	"time"
)

// Books are written off the books' lock. A change is made in memory under s.mu, and touch marks
// the book changed; flush writes its newest version outside s.mu. Writes of one book go one at a
// time, in order (its slot), as the compare-and-set on its key needs; writes of different books
// never wait for each other. A worker flushes its workload's book before it calls an actuator, so
// an action is durable before it is applied; the saver writes the other changed books in the
// background, several at once. So neither a full pass's thousand writes nor one slow write holds
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
			s.dispatchFirst(w)
		case runnable(b):
			s.dispatch(w)
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
// durable. A failed write ends this arbiter's lead: its copy of the books can no longer be
// trusted, and the next lease tick reloads them.
func (s *Service) flush(ctx context.Context, w string) error {
	slot, _ := s.slots.LoadOrStore(w, new(sync.Mutex))
	slot.(*sync.Mutex).Lock()
	defer slot.(*sync.Mutex).Unlock()
	s.mu.Lock()
	b := s.books[w]
	if !s.leading || b == nil {
		s.mu.Unlock()
		return errNotLeading
	}
	if b.saved == b.ver {
		s.mu.Unlock()
		return nil
	}
	epoch, ok := s.lease.valid()
	if !ok {
		s.depose()
		s.mu.Unlock()
		return ErrDeposed
	}
	c := b.clone()
	c.Epoch = epoch
	s.mu.Unlock()

	err := s.store.Save(ctx, c)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.books[w] != b {
		return errNotLeading // deposed meanwhile
	}
	if err != nil {
		s.log.Error("could not record placement; stepping down to reload", "workload", w, "err", err)
		s.depose()
		return err
	}
	b.rev, b.saved, b.Epoch = c.rev, c.ver, epoch
	return nil
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
