package reclaim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// fixture reads a recorded provider document from the shared data folder.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "data", "provider-formats", "fixtures", name)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("fixture %s is absent (the shared data folder sits beside the repository)", p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recorder is a Publisher that keeps what it was given and fails while fail is set.
type recorder struct {
	mu   sync.Mutex
	got  []events.Event
	fail error
	ch   chan events.Event
}

func newRecorder() *recorder { return &recorder{ch: make(chan events.Event, 64)} }

func (r *recorder) Publish(_ context.Context, e events.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	if err := events.Validate(events.Stamp(e)); err != nil {
		return err
	}
	r.got = append(r.got, e)
	select {
	case r.ch <- e:
	default:
	}
	return nil
}

func (r *recorder) setFail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

func (r *recorder) reclaims() []*events.CapacityReclaimed {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*events.CapacityReclaimed
	for _, e := range r.got {
		out = append(out, e.(*events.CapacityReclaimed))
	}
	return out
}

// waitFor waits until the recorder holds n events or the test's patience runs out.
func (r *recorder) waitFor(t *testing.T, n int) []*events.CapacityReclaimed {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(r.reclaims()) < n {
		select {
		case <-r.ch:
		case <-deadline:
			t.Fatalf("published %d notices, want %d", len(r.reclaims()), n)
		}
	}
	return r.reclaims()
}

// clock is a manual clock: each read returns the current time, and step moves it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(t time.Time) *clock { return &clock{now: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}
