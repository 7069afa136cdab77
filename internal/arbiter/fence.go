package arbiter

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// The values the leader keeps in the placement and jobs buckets, each workload's book and each
// deadline-bound job's run, are written one way, by write: stamped with the epoch of the lease
// the leader's copy was loaded under, by a compare-and-set on the revision the key was last read
// or written at (casPut). A deposed leader's late write, made after its successor wrote the key,
// is refused (ErrDeposed) instead of overwriting it, and the deposed leader steps down.

// casPut writes data under key by a compare-and-set on rev, the revision its writer last read or
// wrote there (0: only if the key is new), and returns the revision written. A lost
// compare-and-set where the key holds a value check accepts is another arbiter's write:
// ErrDeposed, as is a key deleted meanwhile (not this arbiter's to recreate). A value check
// refuses is corruption (a server's reply stored there, a hand edit): it is reported and written
// over by a compare-and-set on the revision found, so that a rival's write landing meanwhile
// still wins.
func casPut(ctx context.Context, kv jetstream.KeyValue, key string, data []byte, rev uint64,
	check func(key string, data []byte) error, corrupt func(jetstream.KeyValueEntry, error)) (uint64, error) {
	var wrote uint64
	var err error
	if rev == 0 {
		wrote, err = kv.Create(ctx, key, data)
	} else {
		wrote, err = kv.Update(ctx, key, data, rev)
	}
	if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return wrote, err
	}
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, ErrDeposed
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s after a lost compare-and-set: %w", key, err)
	}
	derr := check(key, e.Value())
	if derr == nil {
		return 0, ErrDeposed
	}
	if corrupt != nil {
		corrupt(e, derr)
	}
	wrote, err = kv.Update(ctx, key, data, e.Revision())
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, ErrDeposed
	}
	return wrote, err
}
