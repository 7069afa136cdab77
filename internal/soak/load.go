package soak

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// load is the collector's telemetry beside the market: GPU samples at Rate per second of wall
// time, published as the GPU collector does (one batch per sweep), plus one burst.
type load struct {
	cancel context.CancelFunc
	done   chan struct{}
	acked  atomic.Int64 // events the bus acknowledged
	failed atomic.Int64 // events whose publish failed for good
	sweeps atomic.Int64
	burst  sync.Once
	mu     sync.Mutex
	sent   []sweep    // the sweeps the bus acknowledged
	losses []bus.Loss // what the publisher was told the bus lost of them
}

// sweep is one acknowledged sweep, from which its events are made again for the checks.
type sweep struct {
	node string
	n    int
	at   time.Time
}

func (s sweep) events() []events.Event {
	evs := make([]events.Event, s.n)
	for i := range evs {
		evs[i] = events.Stamp(&events.GPUSample{Meta: events.Meta{At: s.at}, Location: "soak", Node: s.node,
			UUID: fmt.Sprintf("GPU-%s-%d", s.node, i), Index: i % 8, Model: "V100-16GB", UtilizationPct: float64(i % 100),
			MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 16 << 30, PowerW: 250, TemperatureC: 50})
	}
	return evs
}

// ackedIDs are the ids of every event the bus acknowledged to the collector.
func (l *load) ackedIDs() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := map[string]bool{}
	for _, s := range l.sent {
		for _, e := range s.events() {
			ids[e.Header().ID] = true
		}
	}
	return ids
}

// lost is what the publisher was told the bus lost.
func (l *load) lost() []bus.Loss {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.losses)
}

// sweepEvery is how often the load publishes a sweep.
const sweepEvery = 100 * time.Millisecond

// burstEvents is the size of the one burst.
const burstEvents = 20_000

func (r *rig) startLoad(ctx context.Context) (*load, error) {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, js, err := r.cl.connect(cctx, bus.RoleCollector, "soak-collector", 1)
	if err != nil {
		return nil, err
	}
	lctx, stop := context.WithCancel(ctx)
	l := &load{cancel: stop, done: make(chan struct{})}
	pub := bus.NewPublisher(js)
	pub.OnLost(func(x bus.Loss) {
		r.log.Error(x.String(), "stream", x.Stream)
		l.mu.Lock()
		l.losses = append(l.losses, x)
		l.mu.Unlock()
	})
	per := max(1, r.o.Rate*int(sweepEvery/time.Millisecond)/1000)
	go func() {
		defer close(l.done)
		defer nc.Close()
		t := time.NewTicker(sweepEvery)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
			}
			n := per
			if r.burstDue() {
				l.burst.Do(func() { n += burstEvents })
			}
			l.publish(lctx, pub, time.Now(), n) // wall time: the telemetry tables' TTL drops samples from 2024
		}
	}()
	return l, nil
}

// burstDue says whether the market has reached the middle of the window, where the burst goes.
func (r *rig) burstDue() bool { return r.tick.Load() >= int64(r.env.Rules.Window/2) }

// publish sends one sweep of n GPUs of a node of its own, so every sample is a new event.
func (l *load) publish(ctx context.Context, pub *bus.Publisher, at time.Time, n int) {
	sw := sweep{node: fmt.Sprintf("load-%d", l.sweeps.Add(1)), n: n, at: at.UTC()}
	evs := sw.events()
	for try := 0; ; try++ {
		err := pub.PublishBatch(ctx, evs)
		if err == nil {
			l.acked.Add(int64(n))
			l.mu.Lock()
			l.sent = append(l.sent, sw)
			l.mu.Unlock()
			return
		}
		if ctx.Err() != nil || try == 3 {
			l.failed.Add(int64(n))
			return
		}
	}
}

func (l *load) stop() {
	l.cancel()
	<-l.done
}
