package arbiter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

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

	// foreignRev is the revision of a value under the key that is no lease (see isHolder), first
	// seen at foreignSince; a candidate takes it over once it has stood for a whole TTL.
	foreignRev   uint64
	foreignSince time.Time
	onCorrupt    func(Corruption) // reports such a value; may be nil
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
	rev, valid := l.rev, l.rev != 0 && time.Now().Before(l.until)
	l.mu.Unlock()
	sent := time.Now()
	cctx, cancel := context.WithTimeout(ctx, l.ttl/3)
	defer cancel()
	var newRev uint64
	var err error
	switch {
	case rev != 0:
		newRev, err = l.kv.Update(cctx, l.key, []byte(l.holder), rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) && valid {
			newRev, err = l.retake(cctx)
		}
	default:
		newRev, err = l.kv.Create(cctx, l.key, []byte(l.holder))
		if errors.Is(err, jetstream.ErrKeyExists) {
			newRev, err = l.takeOver(cctx)
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

// retake renews a lease this arbiter still holds whose key something other than an arbiter
// overwrote (a server's reply stored through a reply subject): nobody else can have taken the
// key while the lease was valid, so the holder writes over the value, by a compare-and-set on its
// revision, and keeps the lead. A lease of another holder there ends this one.
func (l *lease) retake(ctx context.Context) (uint64, error) {
	e, err := l.kv.Get(ctx, l.key)
	if err != nil {
		return 0, err
	}
	if isHolder(e.Value()) {
		return 0, jetstream.ErrKeyRevisionMismatch
	}
	l.report(e, "the leader writes its lease over it and keeps the lead")
	return l.kv.Update(ctx, l.key, []byte(l.holder), e.Revision())
}

// takeOver takes the key when it already names this holder (an arbiter restarted under the same
// identity before its old lease expired), or when it holds no lease and has for a whole TTL: the
// holder it replaced, if any, stopped acting by then (at most ttl·(1-margin) after its last
// renewal, which the value replaced) and would have retaken the key before. A lease of another
// holder is respected.
func (l *lease) takeOver(ctx context.Context) (uint64, error) {
	e, err := l.kv.Get(ctx, l.key)
	if err != nil {
		return 0, err
	}
	v := e.Value()
	switch {
	case string(v) == l.holder:
		return l.kv.Update(ctx, l.key, []byte(l.holder), e.Revision())
	case isHolder(v):
		return 0, jetstream.ErrKeyExists
	}
	l.mu.Lock()
	seen := l.foreignRev == e.Revision()
	if !seen {
		l.foreignRev, l.foreignSince = e.Revision(), time.Now()
	}
	stood := time.Since(l.foreignSince)
	l.mu.Unlock()
	if !seen {
		l.report(e, "a standby takes the lease over once it has stood a TTL")
	}
	if stood < l.ttl {
		return 0, jetstream.ErrKeyExists
	}
	return l.kv.Update(ctx, l.key, []byte(l.holder), e.Revision())
}

func (l *lease) report(e jetstream.KeyValueEntry, action string) {
	if l.onCorrupt != nil {
		l.onCorrupt(corruptionOf(e, errNotALease, action))
	}
}

// errNotALease says the lease key holds something no arbiter writes.
var errNotALease = errors.New("not an arbiter's identity")

// maxIdentity bounds an arbiter's identity, the lease's value.
const maxIdentity = 256

// isHolder says whether v is a lease: an arbiter's identity, printable text without spaces that
// does not begin like JSON. Every reply a NATS server sends is JSON, so a reply stored in the key
// through a reply subject is never taken for a holder.
func isHolder(v []byte) bool {
	if len(v) == 0 || len(v) > maxIdentity || !utf8.Valid(v) || v[0] == '{' || v[0] == '[' || v[0] == '"' {
		return false
	}
	for _, r := range string(v) {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// checkIdentity refuses an identity that would not read back as a lease.
func checkIdentity(id string) error {
	if !isHolder([]byte(id)) {
		return fmt.Errorf("identity %q: want up to %d printable characters without spaces, not beginning with {, [ or \"",
			id, maxIdentity)
	}
	return nil
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
