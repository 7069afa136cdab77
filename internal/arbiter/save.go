package arbiter

import (
	"context"
	"sync"
	"time"
)

// Books are written off the books' lock. A change is made in the ledger under the lock, and touch
// marks the book changed; flush writes its newest version outside the lock, as write (books.go)
// writes every value the leader keeps: one at a time per key, by a compare-and-set under the
// lease's epoch; writes of different books never wait for each other. A worker flushes its
// workload's book before it calls an actuator, so an action is durable before it is applied; the
// saver writes the other changed books in the background, several at once. So neither a full pass's
// thousand writes nor one slow write holds the books, delays a reclaim's replacement or the lease's
// renewal.

// saveWorkers is how many books the saver writes at once.
const saveWorkers = 8

// touch marks b changed and queues it for the saver.
func (l *ledger) touch(b *Book) {
	b.ver++
	l.unsaved[b.Workload] = true
	signal(l.saveReq)
}

// touchAll touches the books in dirty and queues for their workers those with actions to run.
// Books answering a reclaim go to the front of their worker's queue: a reclaim on a
// crowded offer re-plans every workload running there, and the replacement should come first.
func (l *ledger) touchAll(dirty map[string]bool) {
	for _, w := range sortedKeys(dirty) {
		b := l.books[w]
		if b == nil {
			continue
		}
		l.touch(b)
		switch {
		case hasAnswer(b):
			l.exec.dispatchFirst(w)
		case runnable(b):
			l.exec.dispatch(w)
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
func (k *books) flush(ctx context.Context, w string) error {
	return k.write(ctx, bookPrefix+w, func(l *ledger, epoch uint64) (func(context.Context) error, func(), error) {
		b := l.books[w]
		if b == nil {
			return nil, nil, errNotLeading
		}
		if b.saved == b.ver {
			return nil, nil, nil
		}
		c := b.clone()
		c.Epoch = epoch
		save := func(ctx context.Context) error { return k.store.Save(ctx, c) }
		return save, func() { b.rev, b.saved, b.Epoch = c.rev, c.ver, epoch }, nil
	})
}

// saveLoop writes the touched books in the background while leading.
func (k *books) saveLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.saveReq:
			k.saveAll(ctx)
		}
	}
}

// saveAll writes every touched book, saveWorkers at a time, and returns once each is durable or
// its write failed (flush logs that and ends the lead). It warns when writing them took a large
// part of the lease's TTL: the lease is renewed apart from the writes, but a store that slow will
// soon fail the compare-and-set races it needs.
func (k *books) saveAll(ctx context.Context) {
	var todo []string
	k.with(func(l *ledger) {
		todo = sortedKeys(l.unsaved)
		clear(l.unsaved)
	})
	if len(todo) == 0 {
		return
	}
	start := time.Now()
	queue := make(chan string)
	var wg sync.WaitGroup
	for range min(saveWorkers, len(todo)) {
		wg.Go(func() {
			for w := range queue {
				_ = k.flush(ctx, w)
			}
		})
	}
	for _, w := range todo {
		queue <- w
	}
	close(queue)
	wg.Wait()
	if took := time.Since(start); took > k.leaseTTL/2 {
		k.log.Warn("writing the books took over half the lease's TTL; is the placement bucket slow?",
			"books", len(todo), "took", took.Round(time.Millisecond), "lease_ttl", k.leaseTTL)
	}
}

// askWhenSaved hands new holds to the gate's asker once the books holding them are durable, so
// nobody is asked about a hold a new leader would not find. It does not wait.
func (k *books) askWhenSaved(ctx context.Context, holds []Hold) {
	if _, ok := k.gate.(Asker); !ok || len(holds) == 0 {
		return
	}
	go func() {
		for _, h := range holds {
			for _, w := range h.Workloads() {
				if k.flush(ctx, w) != nil {
					return // not leading any more: the next leader asks
				}
			}
		}
		ask(ctx, k.gate, holds)
	}()
}

// depose ends the lead after a failed or fenced write, or a lost lease.
func (l *ledger) depose() {
	l.setLeading(false)
	l.books, l.names = nil, nil
	l.resp.forget()
}

// setLeading records whether this arbiter leads. Leading reads the copy in isLeader without the
// lock.
func (l *ledger) setLeading(v bool) {
	l.leading = v
	l.isLeader.Store(v)
	if v {
		l.m.leader.Set(1)
	} else {
		l.m.leader.Set(0)
	}
}
