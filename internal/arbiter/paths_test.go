package arbiter_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
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
