package bus_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// losses collects what a publisher is told.
type losses struct {
	mu  sync.Mutex
	got []bus.Loss
}

func (l *losses) add(x bus.Loss) { l.mu.Lock(); l.got = append(l.got, x); l.mu.Unlock() }

func (l *losses) all() []bus.Loss {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]bus.Loss(nil), l.got...)
}

// watched is a publisher over env whose losses are collected, and a context for the test.
func watched(t *testing.T, env *bustest.Env) (context.Context, *bus.Publisher, *losses) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	pub, told := bus.NewPublisher(env.JS), &losses{}
	pub.OnLost(told.add)
	return ctx, pub, told
}

// gpuSweeps is n GPU samples of distinct nodes at t: one message each.
func gpuSweeps(prefix string, n int, t time.Time) []events.Event {
	var out []events.Event
	for i := range n {
		out = append(out, eventstest.Sweep(fmt.Sprintf("%s-%d", prefix, i), 1, t)...)
	}
	return out
}

// TestAPublisherIsToldOfAStreamThatLostWhatItAcknowledged: the stream comes back short (16 KiB
// of garbage in its block while the server was down) and numbers new messages with the
// sequences of ones it had acknowledged. Nobody had read them, so only the publisher can tell:
// it is told once, with the stream and the sequences.
func TestAPublisherIsToldOfAStreamThatLostWhatItAcknowledged(t *testing.T) {
	env := bustest.Start(t)
	ctx, pub, told := watched(t, env)
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, e := range gpuSweeps("old", 2000, at) {
		if err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	env.Restart(t, func() {
		if err := testkit.Damage(filepath.Join(bus.StreamDir(env.StoreDir, bus.Telemetry), "msgs")); err != nil {
			t.Fatal(err)
		}
	})
	for _, e := range gpuSweeps("new", 20, at.Add(time.Hour)) {
		if err := pub.PublishBatch(ctx, []events.Event{e}); err != nil {
			t.Fatal(err)
		}
	}
	got := told.all()
	if len(got) != 1 || got[0].Stream != bus.Telemetry || got[0].Top != 2000 || got[0].Seq >= 2000 {
		t.Fatalf("told %+v, want one loss on TELEMETRY up to 2000", got)
	}
}

// TestAPublisherSharedByManyIsToldNoLoss: acknowledgements of messages sent side by side come
// back in any order, and a repeat is acknowledged with its first copy's sequence; neither is a loss.
func TestAPublisherSharedByManyIsToldNoLoss(t *testing.T) {
	env := bustest.Start(t)
	ctx, pub, told := watched(t, env)
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			evs := gpuSweeps(fmt.Sprint("g", g), 150, at)
			for i, e := range evs {
				var err error
				if i%2 == 0 {
					err = pub.Publish(ctx, e)
				} else {
					err = pub.PublishBatch(ctx, evs[max(0, i-3):i+1]) // the three before again: repeats
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := told.all(); len(got) != 0 {
		t.Errorf("told %+v on a stream that lost nothing", got)
	}
}
