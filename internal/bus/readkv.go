package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ReadOnly returns js for a role that reads buckets but may create no consumer (every role but
// the arbiter): its KeyValue reads a bucket with direct gets of the bucket's stream, one message
// at a time, where nats.go would create an ordered consumer for a listing, a history or a watch.
// A consumer pushes to a subject its creator names, in the arbiter's account, where a stream or
// bucket's own subjects are, so the server does not let these roles create one (Account).
func ReadOnly(js jetstream.JetStream) jetstream.JetStream { return readOnlyJS{js} }

type readOnlyJS struct{ jetstream.JetStream }

func (r readOnlyJS) KeyValue(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	kv, err := r.JetStream.KeyValue(ctx, bucket)
	if err != nil {
		return nil, err
	}
	st, err := r.JetStream.Stream(ctx, kvStream(bucket))
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s: %w", bucket, err)
	}
	return &directKV{KeyValue: kv, st: st, bucket: bucket}, nil
}

// pollEvery is how often a read-only watcher asks for changes after the current values.
const pollEvery = 500 * time.Millisecond

// directKV is a bucket read with direct gets: Get and GetRevision as nats.go does them, and
// listings, histories and watches by walking the bucket's messages.
type directKV struct {
	jetstream.KeyValue
	st     jetstream.Stream
	bucket string
}

func (d *directKV) subject(key string) string { return "$KV." + d.bucket + "." + key }

// walk returns the messages on the keys filter matches from sequence from on, oldest first.
func (d *directKV) walk(ctx context.Context, filter string, from uint64) ([]*kvEntry, error) {
	var out []*kvEntry
	for seq := max(from, 1); ; {
		m, err := d.st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(d.subject(filter)))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading KV bucket %s: %w", d.bucket, err)
		}
		out = append(out, d.entry(m))
		seq = m.Sequence + 1
	}
}

func (d *directKV) entry(m *jetstream.RawStreamMsg) *kvEntry {
	e := &kvEntry{bucket: d.bucket, key: strings.TrimPrefix(m.Subject, d.subject("")), value: m.Data,
		rev: m.Sequence, at: m.Time, op: jetstream.KeyValuePut}
	switch m.Header.Get("KV-Operation") {
	case "DEL":
		e.op = jetstream.KeyValueDelete
	case "PURGE":
		e.op = jetstream.KeyValuePurge
	}
	return e
}

// latest returns each key's last entry that is not a delete or purge, in revision order.
func (d *directKV) latest(ctx context.Context, filter string) ([]*kvEntry, uint64, error) {
	all, err := d.walk(ctx, filter, 1)
	if err != nil {
		return nil, 0, err
	}
	last := map[string]*kvEntry{}
	var top uint64
	for _, e := range all {
		last[e.key], top = e, e.rev
	}
	var out []*kvEntry
	for _, e := range all {
		if last[e.key] == e && e.op == jetstream.KeyValuePut {
			out = append(out, e)
		}
	}
	return out, top, nil
}

// History returns every kept revision of key, oldest first.
func (d *directKV) History(ctx context.Context, key string, _ ...jetstream.WatchOpt) ([]jetstream.KeyValueEntry, error) {
	all, err := d.walk(ctx, key, 1)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, jetstream.ErrKeyNotFound
	}
	out := make([]jetstream.KeyValueEntry, len(all))
	for i, e := range all {
		out[i] = e
	}
	return out, nil
}

// Keys returns the keys with a live value.
func (d *directKV) Keys(ctx context.Context, _ ...jetstream.WatchOpt) ([]string, error) {
	live, _, err := d.latest(ctx, ">")
	if err != nil {
		return nil, err
	}
	if len(live) == 0 {
		return nil, jetstream.ErrNoKeysFound
	}
	keys := make([]string, len(live))
	for i, e := range live {
		keys[i] = e.key
	}
	return keys, nil
}

func (d *directKV) ListKeys(ctx context.Context, _ ...jetstream.WatchOpt) (jetstream.KeyLister, error) {
	keys, err := d.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, err
	}
	ch := make(chan string, len(keys))
	for _, k := range keys {
		ch <- k
	}
	close(ch)
	return keyList(ch), nil
}

func (d *directKV) ListKeysFiltered(ctx context.Context, filters ...string) (jetstream.KeyLister, error) {
	return nil, fmt.Errorf("reading KV bucket %s: a filtered listing is not available to a read-only role", d.bucket)
}

func (d *directKV) WatchAll(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	return d.Watch(ctx, ">", opts...)
}

func (d *directKV) WatchFiltered(ctx context.Context, keys []string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	if len(keys) != 1 {
		return nil, fmt.Errorf("reading KV bucket %s: a watch of several filters is not available to a read-only role", d.bucket)
	}
	return d.Watch(ctx, keys[0], opts...)
}

// Watch sends the live value of every key keys matches (deleted keys left out, whatever the
// options), then nil, then each later change as it is found, polled every pollEvery, until ctx
// ends or Stop.
func (d *directKV) Watch(ctx context.Context, keys string, _ ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	live, top, err := d.latest(ctx, keys)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &pollWatcher{ch: make(chan jetstream.KeyValueEntry, len(live)+1), stop: cancel}
	for _, e := range live {
		w.ch <- e
	}
	w.ch <- nil
	go d.poll(ctx, w, keys, top)
	return w, nil
}

func (d *directKV) poll(ctx context.Context, w *pollWatcher, keys string, top uint64) {
	defer close(w.ch)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		news, err := d.walk(ctx, keys, top+1)
		if err != nil {
			continue // a transient error: the next tick asks again
		}
		for _, e := range news {
			select {
			case w.ch <- e:
				top = e.rev
			case <-ctx.Done():
				return
			}
		}
	}
}

type pollWatcher struct {
	ch   chan jetstream.KeyValueEntry
	stop context.CancelFunc
	once sync.Once
}

func (w *pollWatcher) Updates() <-chan jetstream.KeyValueEntry { return w.ch }
func (w *pollWatcher) Stop() error                             { w.once.Do(w.stop); return nil }

type keyList chan string

func (k keyList) Keys() <-chan string { return k }
func (k keyList) Stop() error         { return nil }

// kvEntry is one message of a bucket read directly.
type kvEntry struct {
	bucket, key string
	value       []byte
	rev         uint64
	at          time.Time
	op          jetstream.KeyValueOp
}

func (e *kvEntry) Bucket() string                  { return e.bucket }
func (e *kvEntry) Key() string                     { return e.key }
func (e *kvEntry) Value() []byte                   { return e.value }
func (e *kvEntry) Revision() uint64                { return e.rev }
func (e *kvEntry) Created() time.Time              { return e.at }
func (e *kvEntry) Delta() uint64                   { return 0 }
func (e *kvEntry) Operation() jetstream.KeyValueOp { return e.op }

// ForRole returns js as role may use it: the arbiter's as it is, every other role's ReadOnly.
func ForRole(role string, js jetstream.JetStream) jetstream.JetStream {
	if role == RoleArbiter {
		return js
	}
	return ReadOnly(js)
}
