package arbiter_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// twoWorkloads is fleetYAML with a second workload, on on-demand A100s in zone b only, so that
// a reclaim in zone a never falls on it.
const twoWorkloads = fleetYAML + `  - name: batch
    gpu: {models: [A100-80GB], count: 1}
    replicas: {min: 1, max: 1}
    markets: [on_demand]
    weights_gb: 20
    cold_start: 30s
`

// slowBooks is the placement bucket with writes that can be held: once hold(w) is called, each
// write of w's book waits until release.
type slowBooks struct {
	arbiter.KVBooks
	delay   time.Duration // every write takes this long
	mu      sync.Mutex
	held    map[string]chan struct{}
	waiting chan string
}

func (s *slowBooks) Save(ctx context.Context, b *arbiter.Book) error {
	time.Sleep(s.delay)
	s.mu.Lock()
	gate := s.held[b.Workload]
	s.mu.Unlock()
	if gate != nil {
		select {
		case s.waiting <- b.Workload:
		default:
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.KVBooks.Save(ctx, b)
}

func (s *slowBooks) hold(w string) {
	s.mu.Lock()
	s.held[w] = make(chan struct{})
	s.mu.Unlock()
}

func (s *slowBooks) release(w string) {
	s.mu.Lock()
	if g := s.held[w]; g != nil {
		close(g)
		delete(s.held, w)
	}
	s.mu.Unlock()
}

// A reclaim's replacement reaches the actuator while a full pass is in progress (it has taken
// the books and waits for a slow budget store) and while another workload's book is being
// written to a slow placement bucket: the path from a notice to its actuator call holds nothing
// either of them holds.
func TestReclaimIsAnsweredDuringAFullPassAndASlowWrite(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, twoWorkloads)
	kv, err := h.env.JS.KeyValue(ctx, bus.BucketPlacement)
	if err != nil {
		t.Fatal(err)
	}
	store := &slowBooks{KVBooks: arbiter.KVBooks{KV: kv}, held: map[string]chan struct{}{}, waiting: make(chan string, 16)}
	caps := newHeldCaps()
	r := place(ctx, t, h, func() *running {
		return h.start("a1", func(o *arbiter.Options) { o.Books, o.Caps = store, caps })
	})

	// batch is placed now and launches; its replica becomes ready in the next settle, whose write
	// of its book is held.
	id := h.priceOf("us-east-1b", "p4d.24xlarge", "A100-80GB", events.OnDemand, 4.0)
	eventually(t, "the A100 price is folded", func() bool { return r.KnowsPrice(id, 4.0) })
	h.settle(ctx, r)
	h.clock.Advance(31 * time.Second)
	r.Report(ctx)
	store.hold("batch")
	defer store.release("batch")
	caps.hold()
	defer caps.release()
	passed := h.heldPass(ctx, t, r, caps)
	await(t, store.waiting, "a write of batch's book to begin")
	h.reclaimIsReplaced(ctx, t, "a", "the full pass and the write wait")
	store.release("batch")
	caps.release()
	await(t, passed, "the full pass to end")
	h.settleReclaim(ctx, t, r, 3) // svc's two and batch's one
}

// A batch message (a price run's changes, as the collector sends them) is folded event by event,
// as the same events sent one by one would be.
func TestABatchOfPricesIsFoldedEventByEvent(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	r := h.start("a1", nil)
	var batch []events.Event
	var ids []string
	for i, zone := range []string{"us-east-1a", "us-east-1b"} {
		for j, m := range []events.Market{events.Spot, events.OnDemand} {
			usd := 1.0 + float64(2*i+j)/10
			batch = append(batch, &events.PriceObserved{Meta: events.Meta{At: h.clock.Now()}, Provider: "aws",
				Region: "us-east-1", Zone: zone, InstanceType: "p5.xlarge", GPUModel: "H100-80GB", GPUCount: 1,
				GPUMemoryGB: 80, Market: m, USDPerHour: usd, Source: "test"})
			loc, _ := h.cfg.Match("aws", "us-east-1", zone)
			ids = append(ids, loc.Name+"/"+zone+"/p5.xlarge/"+string(m))
		}
	}
	if err := h.pub.PublishBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every price of the batch is folded", func() bool {
		for k, id := range ids {
			if !r.KnowsPrice(id, batch[k].(*events.PriceObserved).USDPerHour) {
				return false
			}
		}
		return true
	})
}

// Book writes that each take over half the lease's TTL do not cost the leader its lease (they run
// apart from its renewal), and the arbiter warns that the placement bucket is slow.
func TestSlowBookWritesWarnAndKeepTheLease(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	kv, err := h.env.JS.KeyValue(ctx, bus.BucketPlacement)
	if err != nil {
		t.Fatal(err)
	}
	store := &slowBooks{KVBooks: arbiter.KVBooks{KV: kv}, delay: 600 * time.Millisecond, held: map[string]chan struct{}{},
		waiting: make(chan string, 16)}
	logs := &testkit.Log{}
	r := place(ctx, t, h, func() *running {
		return h.start("a1", func(o *arbiter.Options) {
			o.Books, o.Log = store, slog.New(slog.NewTextHandler(logs, nil))
		})
	})
	if n := r.Leads(); n != 1 {
		t.Errorf("took the lead %d times, want once: slow writes cost it the lease", n)
	}
	if !strings.Contains(logs.String(), "writing the books took over half the lease's TTL") {
		t.Errorf("no warning that the books are slow to write; log:\n%s", logs.String())
	}
}

// heldGate is a gate whose reviews can be held as heldCaps' reads are: once hold is called, each
// review waits until release, holding the books' lock as every review does.
type heldGate struct {
	arbiter.NoGate
	*heldCaps
}

func (g heldGate) Review(ctx context.Context, p arbiter.Proposal) (arbiter.Ruling, error) {
	if _, err := g.Caps(ctx); err != nil {
		return arbiter.Ruling{}, err
	}
	return g.NoGate.Review(ctx, p)
}

// The leader renews its lease and keeps the lead while a planning pass is held in its gate for
// twice the lease's TTL: a full pass, which holds the books' lock there, and a reclaim's quick
// pass, which holds the loop besides. Before, the loop renewed the lease and took the books' lock
// after each renewal: either pass stopped the renewals, the arbiter stopped leading and, the key
// expired, took the lead afresh once the pass ended.
func TestTheLeaseIsRenewedWhileAPassIsHeld(t *testing.T) {
	tests := []struct {
		name string
		// begin starts a pass that reaches the gate; ended says whether it is over.
		begin func(ctx context.Context, t *testing.T, h *harness, r *running) (ended func() bool)
	}{
		{"a full pass", func(ctx context.Context, t *testing.T, h *harness, r *running) func() bool {
			id := h.priceOf("us-east-1b", "p4d.24xlarge", "A100-80GB", events.OnDemand, 4.0) // batch can be placed
			eventually(t, "the A100 price is folded", func() bool { return r.KnowsPrice(id, 4.0) })
			var passed atomic.Bool
			go func() { r.Pass(ctx); passed.Store(true) }()
			return passed.Load
		}},
		{"a reclaim's quick pass", func(ctx context.Context, t *testing.T, h *harness, r *running) func() bool {
			notice, ok := h.sim.Reclaim("a", 2*time.Minute)
			if !ok {
				t.Fatal("no spot instance to reclaim in zone a")
			}
			before := len(h.sim.Calls())
			if err := h.pub.Publish(ctx, notice); err != nil {
				t.Fatal(err)
			}
			return func() bool { return slices.ContainsFunc(h.sim.Calls()[before:], isReplacement) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, twoWorkloads)
			leases, err := h.env.JS.KeyValue(ctx, bus.BucketLeases)
			if err != nil {
				t.Fatal(err)
			}
			gate := heldGate{heldCaps: newHeldCaps()}
			r := place(ctx, t, h, func() *running {
				return h.start("a1", func(o *arbiter.Options) { o.Gate = gate })
			})
			gate.hold()
			defer gate.release()
			ended := tt.begin(ctx, t, h, r)
			await(t, gate.held, "the pass to reach its gate")
			e, err := leases.Get(ctx, "arbiter")
			if err != nil {
				t.Fatal(err)
			}
			lapsed := 0
			for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if !r.Leading() {
					lapsed++
				}
			}
			if lapsed > 0 {
				t.Errorf("the arbiter did not lead at %d of its checks while the pass was held", lapsed)
			}
			if now, err := leases.Get(ctx, "arbiter"); err != nil {
				t.Errorf("the lease's key is gone after the pass was held: %v", err)
			} else if n := now.Revision() - e.Revision(); n < 2 {
				t.Errorf("the lease was renewed %d times in the 2 s the pass was held, want several", n)
			}
			gate.release()
			eventually(t, "the pass ends", ended)
			if n := r.Leads(); n != 1 {
				t.Errorf("took the lead %d times, want once", n)
			}
		})
	}
}
