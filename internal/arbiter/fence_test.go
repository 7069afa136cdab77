package arbiter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/jobs"
)

// recordingBooks is slowBooks that keeps what each write begun once armed returned.
type recordingBooks struct {
	*slowBooks
	mu      sync.Mutex
	armed   bool
	started int
	errs    []error
}

func (s *recordingBooks) Save(ctx context.Context, b *arbiter.Book) error {
	s.mu.Lock()
	armed := s.armed
	if armed {
		s.started++
	}
	s.mu.Unlock()
	err := s.slowBooks.Save(ctx, b)
	if armed {
		s.mu.Lock()
		s.errs = append(s.errs, err)
		s.mu.Unlock()
	}
	return err
}

// returned says whether every write begun since arm has returned.
func (s *recordingBooks) returned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.errs) == s.started
}

func (s *recordingBooks) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

func (s *recordingBooks) results() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// A leader whose lease is killed mid-pass, with an action for a job in flight (the job's launch,
// whose write of the book before the actuator call is slow), goes on as if it still led: its late
// writes of the job's run and of the book are refused, the buckets keep the values its successor
// wrote at the revisions it wrote them, it steps down, and the job is launched once, by the
// successor. Before, the run was written by a plain Put after a leading check the write no longer
// held: the deposed leader's run replaced its successor's.
func TestDeposedLeadersLateRunAndBookWritesAreFenced(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, jobYAML)
	for _, zone := range []string{"us-east-1a", "us-east-1b"} {
		h.price(zone, events.Spot, 1.0)
		h.price(zone, events.OnDemand, 3.0)
	}
	pkv, jkv, lkv := bucket(t, h, bus.BucketPlacement), bucket(t, h, bus.BucketJobs), bucket(t, h, bus.BucketLeases)
	store := &recordingBooks{slowBooks: &slowBooks{KVBooks: arbiter.KVBooks{KV: pkv}, held: map[string]chan struct{}{},
		waiting: make(chan string, 16)}}
	store.arm()
	store.hold("tune")
	caps := newHeldCaps()
	// The old leader renews rarely, so that it still counts itself leader once its key is gone,
	// as one paused past its lease does.
	old := h.start("a1", func(o *arbiter.Options) { o.Books, o.Caps, o.LeaseTTL = store, caps, time.Hour })
	eventually(t, "a1 leads", old.Leading)
	await(t, store.waiting, "a1's write of the book recording the job's launch")
	runWritten(t, old, jkv)

	// a1's next pass begins; its lease is killed, and b1 takes the lead and launches the job.
	caps.hold()
	passed := h.heldPass(ctx, t, old, caps)
	if err := lkv.Delete(ctx, "arbiter"); err != nil {
		t.Fatal(err)
	}
	successor := h.start("b1", nil)
	eventually(t, "b1 leads", successor.Leading)
	h.settle(ctx, successor)
	if g := runningGroups(h); len(g) != 1 {
		t.Fatalf("the job runs on %v under the new leader, want one group", g)
	}
	eventually(t, "b1's books are written", successor.Durable)
	runRev := runWritten(t, successor, jkv)
	book, err := pkv.Get(ctx, "workload.tune")
	if err != nil {
		t.Fatal(err)
	}
	calls := len(h.sim.Calls())

	// a1's pass goes on, a minute later by the fleet's clock: the job's run changes (what it cost
	// up to now) and a1 writes it; then its write of the book goes through to the bucket.
	h.clock.Advance(time.Minute)
	caps.release()
	await(t, passed, "a1's pass to end")
	eventually(t, "a1 writes the job's run", func() bool {
		e, err := jkv.Get(ctx, "state.tune")
		return !old.Leading() || err == nil && e.Revision() != runRev
	})
	store.release("tune")
	eventually(t, "a1 steps down", func() bool { return !old.Leading() })
	eventually(t, "a1's write of the book returns", store.returned)

	// The new leader may write the run again meanwhile (the minute it ran); whoever wrote the
	// run last, it was the new leader, under its lease's epoch.
	if got, want := epochAt(ctx, t, jkv, "state.tune", 0), epochAt(ctx, t, jkv, "state.tune", runRev); got != want {
		t.Errorf("the job's run was last written under epoch %d, want %d as the new leader wrote it: the deposed leader's write went through",
			got, want)
	}
	if got, want := epochAt(ctx, t, pkv, "workload.tune", 0), epochAt(ctx, t, pkv, "workload.tune", book.Revision()); got != want {
		t.Errorf("the job's book was last written under epoch %d, want %d as the new leader wrote it", got, want)
	}
	if errs := store.results(); len(errs) != 1 || !errors.Is(errs[0], arbiter.ErrDeposed) {
		t.Errorf("a1's late writes of the book returned %v, want one ErrDeposed", errs)
	}
	if n := len(h.sim.Calls()); n != calls {
		t.Errorf("the actuator got %d calls once b1 led, want none from a1", n-calls)
	}
	if n := len(h.sim.Calls()); n != 1 {
		t.Errorf("the actuator got %d calls, want the job's launch once", n)
	}
	h.onlyOnce(t)
	if !successor.Leading() {
		t.Error("the new leader lost the lead")
	}
}

func bucket(t *testing.T, h *harness, name string) jetstream.KeyValue {
	t.Helper()
	kv, err := h.env.JS.KeyValue(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// runWritten waits until the jobs bucket holds r's run of the job tune, and returns its revision.
// epochAt is the lease epoch the value of key was written under (a job's run or a plain JSON
// book both carry it as "epoch"), at revision rev (0: the latest).
func epochAt(ctx context.Context, t *testing.T, kv jetstream.KeyValue, key string, rev uint64) uint64 {
	t.Helper()
	get := func() (jetstream.KeyValueEntry, error) { return kv.Get(ctx, key) }
	if rev != 0 {
		get = func() (jetstream.KeyValueEntry, error) { return kv.GetRevision(ctx, key, rev) }
	}
	e, err := get()
	if err != nil {
		t.Fatalf("reading %s at revision %d: %v", key, rev, err)
	}
	var v struct {
		Epoch uint64 `json:"epoch"`
	}
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		t.Fatalf("%s at revision %d: %v", key, e.Revision(), err)
	}
	return v.Epoch
}

func runWritten(t *testing.T, r *running, jkv jetstream.KeyValue) uint64 {
	t.Helper()
	var rev uint64
	eventually(t, "the job's run is written", func() bool {
		run, ok := r.JobRunOf("tune")
		want, _ := json.Marshal(run)
		e, err := jkv.Get(context.Background(), "state.tune")
		if !ok || err != nil {
			return false
		}
		var got jobs.Run
		if json.Unmarshal(e.Value(), &got) != nil {
			return false
		}
		have, _ := json.Marshal(got)
		rev = e.Revision()
		return bytes.Equal(have, want)
	})
	return rev
}
