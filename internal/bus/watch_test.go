package bus_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// TestWatchOutlivesALostConsumer: a server that comes back without the bucket's stream (as one
// whose JetStream is not up yet answers) makes nats.go close a bucket's watch for good. bus.Watch
// watches again once the stream is back, from the revision after the last it delivered: the
// changes made meanwhile arrive once each, nothing already delivered comes again, and the
// marker of the initial values comes once. (An arbiter whose budget watch closed so exited.)
func TestWatchOutlivesALostConsumer(t *testing.T) {
	t.Parallel() // it waits most of its time for nats.go to give the watch up
	env := bustest.Start(t)
	ctx := t.Context()
	kv, err := env.JS.KeyValue(ctx, bus.BucketBudgets)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, kv, "a", "1")
	logs := &testkit.Log{}
	w, err := bus.Watch(ctx, kv, ">", slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := next(t, w, 2); got != "a=1 <nil>" {
		t.Fatalf("initial values %q, want a=1 then the marker", got)
	}

	js := filepath.Join(env.StoreDir, "jetstream")
	away := js + ".away"
	env.Restart(t, func() { mustRename(t, js, away) }) // the server comes back without the stream
	waitFor(t, "the watch to stop and be retried", func() bool {
		return strings.Contains(logs.String(), "watching a bucket again failed")
	})
	env.Restart(t, func() { // and again with it
		if err := os.RemoveAll(js); err != nil {
			t.Fatal(err)
		}
		mustRename(t, away, js)
	})
	kv, err = env.JS.KeyValue(ctx, bus.BucketBudgets)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, kv, "b", "2")
	if err := kv.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := next(t, w, 2); got != "b=2 a=DEL" {
		t.Fatalf("after the restarts %q, want b=2 then a deleted, once each", got)
	}
	select {
	case e := <-w.Updates():
		t.Fatalf("an entry more: %v", e)
	case <-time.After(300 * time.Millisecond):
	}
	w.Stop()
	if _, ok := <-w.Updates(); ok {
		t.Fatal("Updates still open after Stop")
	}
}

// next reads n entries as key=value (DEL for a delete, <nil> for the marker).
func next(t *testing.T, w *bus.Watcher, n int) string {
	t.Helper()
	var out []string
	for range n {
		select {
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				t.Fatalf("Updates closed after %v", out)
			case e == nil:
				out = append(out, "<nil>")
			case e.Operation() != jetstream.KeyValuePut:
				out = append(out, e.Key()+"=DEL")
			default:
				out = append(out, e.Key()+"="+string(e.Value()))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no entry after %v", out)
		}
	}
	return strings.Join(out, " ")
}

func mustPut(t *testing.T, kv jetstream.KeyValue, k, v string) {
	t.Helper()
	if _, err := kv.Put(context.Background(), k, []byte(v)); err != nil {
		t.Fatal(err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
