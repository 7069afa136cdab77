package bus

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/backoff"
)

// watchRetry spaces the attempts to watch a bucket again after its watch stopped.
var watchRetry = backoff.Policy{Min: 100 * time.Millisecond, Max: 5 * time.Second}

// Watcher follows a bucket's values for as long as its context lives, across server restarts.
type Watcher struct {
	updates chan jetstream.KeyValueEntry
	cancel  context.CancelFunc
	done    chan struct{}
}

// Watch follows the values of kv under filter (">" for every key) as kv.Watch does, but outlives
// the server: where nats.go cannot re-create a watch's consumer after a restart (JetStream not
// back yet, no responders) it closes the watch for good, and Watch then watches again, after a
// pause that grows while it keeps failing, from the revision after the last one delivered, so no
// change (deletes and purges included) is missed or delivered twice. The nil that marks the
// values current at the start delivered comes once. Updates closes only when ctx ends or Stop is
// called. The error is the first watch's.
func Watch(ctx context.Context, kv jetstream.KeyValue, filter string, log *slog.Logger) (*Watcher, error) {
	first, err := kv.Watch(ctx, filter)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{updates: make(chan jetstream.KeyValueEntry), cancel: cancel, done: make(chan struct{})}
	go w.run(ctx, kv, filter, first, log)
	return w, nil
}

// Updates delivers the values, then nil once, then every change.
func (w *Watcher) Updates() <-chan jetstream.KeyValueEntry { return w.updates }

// Stop ends the watch and waits until Updates is closed.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

func (w *Watcher) run(ctx context.Context, kv jetstream.KeyValue, filter string, cur jetstream.KeyWatcher, log *slog.Logger) {
	defer close(w.done)
	defer close(w.updates)
	var last uint64 // the revision of the last entry delivered
	marked := false // the nil after the values current at the start was delivered
	for fails := 0; ; {
		if cur != nil {
			if !w.pump(ctx, cur, &last, &marked) {
				_ = cur.Stop()
				return
			}
			_ = cur.Stop()
			fails = 0
			log.Warn("a bucket's watch stopped (the server restarted?); watching it again",
				"bucket", kv.Bucket(), "from_revision", last+1)
		}
		fails++
		if backoff.Sleep(ctx, watchRetry.Delay(fails)) != nil {
			return
		}
		var opts []jetstream.WatchOpt
		if last > 0 {
			opts = append(opts, jetstream.ResumeFromRevision(last+1))
		}
		var err error
		if cur, err = kv.Watch(ctx, filter, opts...); err != nil {
			cur = nil
			log.Warn("watching a bucket again failed; will retry", "bucket", kv.Bucket(), "err", err)
		}
	}
}

// pump passes cur's entries on until cur closes (true) or ctx ends (false).
func (w *Watcher) pump(ctx context.Context, cur jetstream.KeyWatcher, last *uint64, marked *bool) bool {
	for {
		var e jetstream.KeyValueEntry
		var ok bool
		select {
		case <-ctx.Done():
			return false
		case e, ok = <-cur.Updates():
			if !ok {
				return true
			}
		}
		if e == nil {
			if *marked {
				continue
			}
			*marked = true
		} else {
			*last = e.Revision()
		}
		select {
		case w.updates <- e:
		case <-ctx.Done():
			return false
		}
	}
}
