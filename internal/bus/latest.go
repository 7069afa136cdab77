package bus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// EachLatest calls fn with every value under filter (a key or a wildcard) as the bucket holds it
// now, deleted keys left out. It reads them as one stream of the bucket's latest values (a
// watch), not one request per key: ten thousand books load in well under a second.
func EachLatest(ctx context.Context, kv jetstream.KeyValue, filter string, fn func(jetstream.KeyValueEntry)) error {
	w, err := kv.Watch(ctx, filter, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok { // nats.go gave the watch up (the server went away): the values are not all read
				return fmt.Errorf("reading %s: the watch stopped before every value was read", kv.Bucket())
			}
			if e == nil { // every current value was delivered
				return nil
			}
			fn(e)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
