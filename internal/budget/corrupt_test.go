package budget

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// A policy overwritten with a server's reply (issue 27: a publish acknowledgement stored through
// a reply subject, read as a policy with no limit) stays as it was for the watch, which writes its
// last revision back and reports the value; a key that never held a revision is deleted.
func TestWatchRestoresACorruptPolicy(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := OpenStore(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reported []string
	s.OnCorrupt = func(e jetstream.KeyValueEntry, err error, _ string) {
		mu.Lock()
		defer mu.Unlock()
		if errors.Is(err, ErrCorrupt) {
			reported = append(reported, e.Key())
		}
	}
	p := validPolicy()
	if _, err := s.Put(ctx, p, "alice", t0); err != nil {
		t.Fatal(err)
	}
	seen := make(chan []Policy, 64)
	go func() { _ = s.Watch(ctx, slog.New(slog.DiscardHandler), func(ps []Policy) { seen <- ps }) }()
	<-seen
	kv, err := env.JS.KeyValue(ctx, bus.BucketBudgets)
	if err != nil {
		t.Fatal(err)
	}
	ack := []byte(`{"stream":"KV_bursar_budgets","seq":9}`)
	for _, key := range []string{p.Name, "cap"} {
		if _, err := kv.Put(ctx, key, ack); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, gerr := s.Get(ctx, p.Name)
		_, cerr := kv.Get(ctx, "cap")
		if gerr == nil && got.Policy.Limit == p.Limit && got.Actor == "alice" && errors.Is(cerr, jetstream.ErrKeyNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restored: %+v, %v; cap: %v", got, gerr, cerr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		select {
		case ps := <-seen:
			for _, q := range ps {
				if q.Name != p.Name || q.Limit != p.Limit {
					t.Fatalf("the watch applied %+v, want only %s with limit %v", q, p.Name, p.Limit)
				}
			}
			continue
		default:
		}
		break
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 2 {
		t.Errorf("reported %v, want both keys", reported)
	}
}
