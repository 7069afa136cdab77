package arbiter

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// lease is leader election over one key of the leases bucket, whose TTL expires a lease nobody
// renews. The holder renews every ttl/3 with a compare-and-set on the key's revision. It counts
// itself leader only until ttl·(1-margin) after it *sent* its last successful renewal, measured on
// its own monotonic clock; the key expires ttl after the server stored that write, which is later.
// So a holder cut off from NATS stops acting before anyone else can take the key over.
type lease struct {
	kv     jetstream.KeyValue
	key    string
	holder string
	ttl    time.Duration

	mu    sync.Mutex
	rev   uint64    // revision of our last write; 0 when not holding
	epoch uint64    // revision at acquisition: a fencing token recorded with every book write
	until time.Time // monotonic: we may act before this
}

// leaseMargin is the share of the TTL given up as safety against clock rate differences and
// the delay between sending a renewal and the server storing it.
const leaseMargin = 0.2

func newLease(kv jetstream.KeyValue, key, holder string, ttl time.Duration) *lease {
	return &lease{kv: kv, key: key, holder: holder, ttl: ttl}
}

// valid says whether this arbiter may act now, and under which epoch.
func (l *lease) valid() (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rev == 0 || !time.Now().Before(l.until) {
		return 0, false
	}
	return l.epoch, true
}

// tick acquires or renews the lease once. It reports whether this arbiter holds it afterwards.
func (l *lease) tick(ctx context.Context) bool {
	l.mu.Lock()
	rev := l.rev
	l.mu.Unlock()
	sent := time.Now()
	cctx, cancel := context.WithTimeout(ctx, l.ttl/3)
	defer cancel()
	var newRev uint64
	var err error
	switch {
	case rev != 0:
		newRev, err = l.kv.Update(cctx, l.key, []byte(l.holder), rev)
	default:
		newRev, err = l.kv.Create(cctx, l.key, []byte(l.holder))
		if errors.Is(err, jetstream.ErrKeyExists) {
			newRev, err = l.reclaimOwn(cctx)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// A failed renewal does not end the lease at once: it stays valid until `until`, and the
		// next tick tries again with the same revision.
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyExists) {
			l.rev, l.until = 0, time.Time{}
		}
		return l.rev != 0 && time.Now().Before(l.until)
	}
	if rev == 0 {
		l.epoch = newRev
	}
	l.rev = newRev
	l.until = sent.Add(time.Duration(float64(l.ttl) * (1 - leaseMargin)))
	return true
}

// reclaimOwn takes the key over when it already names this holder: an arbiter restarted under the
// same identity before its old lease expired.
func (l *lease) reclaimOwn(ctx context.Context) (uint64, error) {
	e, err := l.kv.Get(ctx, l.key)
	if err != nil {
		return 0, err
	}
	if string(e.Value()) != l.holder {
		return 0, jetstream.ErrKeyExists
	}
	return l.kv.Update(ctx, l.key, []byte(l.holder), e.Revision())
}

// release gives the lease up at once, so a standby need not wait for the TTL.
func (l *lease) release(ctx context.Context) {
	l.mu.Lock()
	rev := l.rev
	l.rev, l.until = 0, time.Time{}
	l.mu.Unlock()
	if rev != 0 {
		_ = l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev))
	}
}

// holderOf returns who holds the lease now, "" when nobody does.
func holderOf(ctx context.Context, kv jetstream.KeyValue, key string) string {
	e, err := kv.Get(ctx, key)
	if err != nil {
		return ""
	}
	return string(e.Value())
}
