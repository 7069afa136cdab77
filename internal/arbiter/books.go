package arbiter

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/jobs"
)

// books is the one owner of the leader's state: the ledger in memory, under mu, and its copy in
// the placement and jobs buckets, which only books writes (write). Its lock is taken here and
// nowhere else: work on the ledger runs inside with, for work in memory only (a few milliseconds
// on a thousand workloads), and every write runs outside it.
type books struct {
	mu sync.Mutex
	l  *ledger

	cfg      *fleet.Config
	clock    Clock
	store    BookStore // the books' bucket (KVBooks)
	runs     jobs.KV   // the jobs bucket
	lease    *lease
	slots    sync.Map // key → *sync.Mutex: one write of a book or job's run at a time (write)
	gate     Gate
	ann      *announcer
	m        *metrics
	log      *slog.Logger
	leaseTTL time.Duration
	// saveReq wakes the saver, jobsSave the job loop (the ledger's touch and tell signal them).
	saveReq, jobsSave chan struct{}
}

// with runs fn on the ledger, holding the books' lock.
func (k *books) with(fn func(l *ledger)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fn(k.l)
}

// leads says whether this arbiter leads, without the lock.
func (k *books) leads() bool { return k.l.isLeader.Load() }

// numberReport numbers an actuator's report before it is asked (truth), without the lock.
func (k *books) numberReport() uint64 { return k.l.reportSeq.Add(1) }

// takeLead loads every book and job's run as the bucket holds them and makes them the ledger's,
// under the lease's epoch. It returns the workloads with actions to resume and the holds to ask
// about again.
func (k *books) takeLead(ctx context.Context) (resume []string, holds []Hold, err error) {
	bs, err := k.store.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	for w, b := range bs {
		b.ver, b.saved = 0, 0 // as read: durable
		if len(b.Actions) > 0 {
			resume = append(resume, w)
		}
	}
	runs, err := k.runs.LoadRuns(ctx)
	if err != nil {
		return nil, nil, err
	}
	epoch, _ := k.lease.valid()
	k.with(func(l *ledger) {
		l.books, l.names = bs, nil
		l.resp.forget()
		l.takeRuns(runs)
		clear(l.unsaved)
		l.setLeading(true)
		l.lead++
		l.epoch = epoch
		holds = l.holds()
	})
	k.log.Info("leading", "epoch", epoch, "workloads", len(bs), "approvals_pending", len(holds))
	return resume, holds, nil
}

// stepDown ends the lead: the ledger forgets the books, and the next lead reloads them.
func (k *books) stepDown() { k.with((*ledger).depose) }

// write writes one value the leader keeps (a book, a job's run). Writes of one key go one at a
// time, in order (its slot), as the compare-and-set needs; writes of different keys never wait for
// each other. Under the books' lock, take copies the value from the ledger stamped with the lease's
// epoch and returns how to save the copy (save nil: nothing to write) and how to record it in the
// ledger once saved (done); the save runs outside the lock. A write is refused with ErrDeposed when
// the lease is no longer the one this arbiter took the lead under, or when the compare-and-set
// finds the key written by another arbiter. That, or any other failed write, ends the lead: this
// arbiter's copy can no longer be trusted, and the next lease tick reloads it.
func (k *books) write(ctx context.Context, key string,
	take func(l *ledger, epoch uint64) (save func(context.Context) error, done func(), err error)) error {
	slot, _ := k.slots.LoadOrStore(key, new(sync.Mutex))
	slot.(*sync.Mutex).Lock()
	defer slot.(*sync.Mutex).Unlock()
	var save func(context.Context) error
	var done func()
	var lead uint64
	var err error
	k.with(func(l *ledger) {
		if !l.leading {
			err = errNotLeading
			return
		}
		epoch, ok := k.lease.valid()
		if !ok || epoch != l.epoch {
			l.depose()
			err = ErrDeposed
			return
		}
		save, done, err = take(l, epoch)
		lead = l.lead
	})
	if err != nil || save == nil {
		return err
	}

	err = save(ctx)
	k.with(func(l *ledger) {
		switch {
		case !l.leading || l.lead != lead:
			err = errNotLeading // deposed meanwhile
		case err != nil:
			k.log.Error("could not write the leader's state; stepping down to reload", "key", key, "err", err)
			l.depose()
		default:
			done()
		}
	})
	return err
}
