package arbiter

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/jobs"
)

// jobIO is the job loop's hold on the bus: a watch of the jobs bucket and the admin service.
type jobIO struct {
	watch *bus.Watcher
	admin *nats.Subscription
}

// openJobs reads every job of the jobs bucket into the table, records bursar.yaml's jobs as
// submitted now where the bucket has none yet (so their deadline_in counts from the arbiter's
// first start, not from each restart), and begins answering "arbiter job submit|cancel". It
// returns once the table holds every job, so no plan is made without them.
func (k *books) openJobs(ctx context.Context, nc *nats.Conn) (*jobIO, error) {
	io := &jobIO{}
	var err error
	for _, j := range jobs.FromConfig(k.cfg, k.clock.Now()) {
		if err := k.runs.EnsureSpec(ctx, j); err != nil {
			return nil, err
		}
	}
	io.watch, err = bus.Watch(ctx, k.runs.KV, ">", k.log)
	if err != nil {
		return nil, fmt.Errorf("watching KV bucket %s: %w", bus.BucketJobs, err)
	}
	for e := range io.watch.Updates() {
		if e == nil {
			break // every current value was delivered
		}
		k.with(func(l *ledger) { l.foldJob(e) })
	}
	io.admin, err = k.runs.Serve(ctx, nc, k.cfg, k.clock.Now, k.log)
	if err != nil {
		io.watch.Stop()
		return nil, err
	}
	return io, nil
}

// jobLoop follows the bucket (new submissions, cancels, a leader's state for a standby) and
// writes the runs the leader changed, until ctx ends. It signals changed when a plan may change.
func (k *books) jobLoop(ctx context.Context, io *jobIO, changed chan struct{}) {
	defer func() { io.watch.Stop(); _ = io.admin.Unsubscribe() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-io.watch.Updates():
			if !ok {
				return
			}
			more := false
			if e != nil {
				k.with(func(l *ledger) { more = l.foldJob(e) })
			}
			if more {
				signal(changed)
			}
			k.restoreSpecs(ctx)
		case <-k.jobsSave:
			k.saveJobs(ctx)
		case <-tick.C:
			k.restoreSpecs(ctx)
			k.saveJobs(ctx)
			landed := false
			k.with(func(l *ledger) { landed = l.moveLanded() })
			if landed {
				signal(changed) // retire the old instance at the next pass, not at the next interval
			}
		}
	}
}

// moveLanded says whether a job's make-before-break move has its new instance reported with
// capacity while the old one still runs: a pass then retires the old one, which is paid for
// every second it is kept.
func (l *ledger) moveLanded() bool {
	if !l.leading {
		return false
	}
	for name := range l.jobs {
		b := l.books[name]
		if lives := liveReplicas(b); len(lives) > 1 && !slices.ContainsFunc(b.Actions, moving) && l.gotCapacity(b, lives[len(lives)-1]) {
			return true
		}
	}
	return false
}

// foldJob takes one bucket entry into the table: a submission (new, or cancelled), or a run
// the leader wrote, which only a follower takes (the leader's memory is the newer). It reports
// whether a plan may change.
func (l *ledger) foldJob(e jetstream.KeyValueEntry) bool {
	if e.Operation() != jetstream.KeyValuePut {
		return false
	}
	switch {
	case strings.HasPrefix(e.Key(), bus.JobSpecPrefix):
		spec, err := jobs.DecodeSpec(e.Key(), e.Value())
		if err != nil {
			l.badSpec(e, err)
			return false
		}
		j := l.jobs[spec.Workload.Name]
		if j == nil {
			j = &job{}
			j.Run.State = "submitted"
			l.jobs[spec.Workload.Name] = j
		}
		j.Spec = spec
		return true
	case strings.HasPrefix(e.Key(), bus.JobStatePrefix):
		run, err := jobs.DecodeRun(e.Value())
		if err != nil {
			l.badRun(e, err)
			return false
		}
		if l.leading {
			return false
		}
		name := strings.TrimPrefix(e.Key(), bus.JobStatePrefix)
		for n, j := range l.jobs {
			if jobs.StateKey(n) == e.Key() || n == name {
				j.Run, j.saved, j.rev = run, run, e.Revision()
			}
		}
	}
	return false
}

// saveJobs writes the runs changed since they were last written, outside the books' lock, each
// as a book is written (saveRun). It stops at the first that fails: that ended the lead.
func (k *books) saveJobs(ctx context.Context) {
	var todo []string
	k.with(func(l *ledger) {
		if !l.leading {
			return
		}
		for name, j := range l.jobs {
			if j.Run != j.saved {
				todo = append(todo, name)
			}
		}
	})
	slices.Sort(todo)
	for _, name := range todo {
		if k.saveRun(ctx, name) != nil {
			return
		}
	}
}

// saveRun writes the job's run if it changed since its last write, by the leader's one way to
// write (write): stamped with the lease's epoch, by a compare-and-set on the revision of its key
// last read or written. A write refused or failed ends the lead, as a book's does.
func (k *books) saveRun(ctx context.Context, name string) error {
	return k.write(ctx, jobs.StateKey(name), func(l *ledger, epoch uint64) (func(context.Context) error, func(), error) {
		j := l.jobs[name]
		if j == nil || j.Run == j.saved {
			return nil, nil, nil
		}
		taken, rev := j.Run, j.rev
		run := taken
		run.Epoch = epoch
		var wrote uint64
		save := func(ctx context.Context) (err error) {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			wrote, err = putRun(cctx, k.runs, name, run, rev)
			return err
		}
		done := func() {
			if j.Run == taken {
				j.Run = run
			}
			j.saved, j.rev = run, wrote
		}
		return save, done, nil
	})
}

// putRun writes the job's run by a compare-and-set on rev, the revision of its key last read or
// written (casPut, as a book is written), and returns the revision written: ErrDeposed when
// another arbiter wrote it since. A key holding something that is not a run is reported
// (kv.OnCorrupt) and written over.
func putRun(ctx context.Context, kv jobs.KV, name string, r jobs.Run, rev uint64) (uint64, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("encoding the state of job %s: %w", name, err)
	}
	wrote, err := casPut(ctx, kv.KV, jobs.StateKey(name), data, rev, jobs.CheckRun, func(e jetstream.KeyValueEntry, err error) {
		if kv.OnCorrupt != nil {
			kv.OnCorrupt(e, err, "restored from the leader's copy")
		}
	})
	if err != nil {
		return 0, fmt.Errorf("saving the state of job %s: %w", name, err)
	}
	return wrote, nil
}
