package arbiter_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/jobs"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// A server's reply stored in a key through a reply subject, as issue 27 found them: a publish
// acknowledgement in a book or a job, an API answer in the lease.
const (
	ackValue  = `{"stream":"KV_bursar_placement","seq":7}`
	infoValue = `{"type":"io.nats.jetstream.api.v1.account_info_response","memory":0,"storage":1024,"streams":9}`
)

// reports is what an arbiter said of corruption: its log, its metric and its alerts.
type reports struct {
	logs *testkit.Log
	reg  *prometheus.Registry
	mu   sync.Mutex
	got  []arbiter.Corruption
}

func newReports() *reports { return &reports{logs: &testkit.Log{}, reg: prometheus.NewRegistry()} }

func (r *reports) tweak(o *arbiter.Options) {
	o.Log = slog.New(slog.NewTextHandler(r.logs, nil))
	o.Registry = r.reg
	o.OnCorrupt = func(c arbiter.Corruption) {
		r.mu.Lock()
		r.got = append(r.got, c)
		r.mu.Unlock()
	}
}

// saw fails the test unless the key was reported as corrupt in all three ways.
func (r *reports) saw(t *testing.T, bucket, key string) {
	t.Helper()
	eventually(t, "an alert names "+key, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, c := range r.got {
			if c.Bucket == bucket && c.Key == key && (strings.Contains(c.Found, `\"stream\"`) || strings.Contains(c.Found, "account_info")) {
				return true
			}
		}
		return false
	})
	if n, err := testutil.GatherAndCount(r.reg, "bursar_arbiter_corrupt_values_total"); err != nil || n == 0 {
		t.Errorf("bursar_arbiter_corrupt_values_total has %d series (%v), want one for %s", n, err, bucket)
	}
	if l := r.logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "key="+key) {
		t.Errorf("no error in the log naming %s; log:\n%s", key, l)
	}
}

func put(t *testing.T, js jetstream.JetStream, bucket, key, value string) {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), key, []byte(value)); err != nil {
		t.Fatal(err)
	}
}

// bookOf reads svc's book back as any arbiter would.
func bookOf(t *testing.T, h *harness) *arbiter.Book {
	t.Helper()
	books, err := arbiter.LoadBooks(context.Background(), h.env.JS, bus.BucketPlacement)
	if err != nil {
		t.Fatal(err)
	}
	return books["svc"]
}

// A book overwritten while its arbiter leads is reported and written back from the leader's copy:
// the leader keeps the lead and answers the next reclaim. Before, every save of the book failed
// ("it no longer leads") and the workload was frozen.
func TestCorruptBookIsRestoredByTheLeader(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	rep := newReports()
	r := place(ctx, t, h, func() *running { return h.start("a1", rep.tweak) })
	_, js := h.env.ConnectAs(t, bus.RoleArbiter)
	put(t, js, bus.BucketPlacement, "workload.svc", ackValue)

	h.reclaimIsReplaced(ctx, t, "a", "the book holds a server's reply")
	rep.saw(t, "bursar_placement", "workload.svc")
	if n := r.Leads(); n != 1 {
		t.Errorf("took the lead %d times, want once: the corrupt book cost it the lead", n)
	}
	if b := bookOf(t, h); b == nil || len(b.Replicas) < 2 {
		t.Fatalf("the book was not written back: %+v", b)
	}
}

// A book found corrupt when an arbiter takes the lead is written anew from what the actuator
// reports, over the value found: a restart recovers the workload. Before, it never did.
func TestCorruptBookIsRestoredAfterARestart(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	first := place(ctx, t, h, func() *running { return h.start("a1", nil) })
	first.stop(t)
	_, js := h.env.ConnectAs(t, bus.RoleArbiter)
	put(t, js, bus.BucketPlacement, "workload.svc", ackValue)

	rep := newReports()
	second := h.start("a1", rep.tweak)
	eventually(t, "the restarted arbiter leads", second.Leading)
	h.settle(ctx, second)
	rep.saw(t, "bursar_placement", "workload.svc")
	eventually(t, "the book is written back", func() bool { b := bookOf(t, h); return b != nil && len(b.Replicas) == 2 })
	if n := ready(h); n != 2 {
		t.Errorf("%d replicas ready after the restart, want 2", n)
	}
	h.reclaimIsReplaced(ctx, t, "a", "the book was restored")
	if n := second.Leads(); n != 1 {
		t.Errorf("took the lead %d times, want once", n)
	}
}

// A lease overwritten with something that is no lease while its holder leads is taken back by
// the holder at its next renewal: it never stops leading. Before, it stepped down and nobody led
// until the value expired.
func TestCorruptLeaseIsRetakenByItsHolder(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	rep := newReports()
	r := place(ctx, t, h, func() *running { return h.start("a1", rep.tweak) })
	_, js := h.env.ConnectAs(t, bus.RoleArbiter)
	kv, err := js.KeyValue(ctx, bus.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "arbiter", []byte(infoValue)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the holder writes its lease back", func() bool {
		e, err := kv.Get(ctx, "arbiter")
		return err == nil && string(e.Value()) == "a1"
	})
	rep.saw(t, "bursar_leases", "arbiter")
	h.reclaimIsReplaced(ctx, t, "a", "the lease was overwritten")
	if n := r.Leads(); n != 1 {
		t.Errorf("took the lead %d times, want once: the foreign value cost it the lead", n)
	}
}

// A job's submission and run overwritten while the arbiter leads are reported and written back
// from what the leader knows, and a job of bursar.yaml whose submission is corrupt when the
// arbiter starts is submitted again: the job is placed. Before, the job was dropped at the next
// start and never ran.
func TestCorruptJobIsRestored(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, jobYAML)
	aSpot := h.price("us-east-1a", events.Spot, 1.0)
	h.price("us-east-1a", events.OnDemand, 3.0)
	rep := newReports()
	r := h.start("a1", func(o *arbiter.Options) { rep.tweak(o); o.Interval = jobStep })
	eventually(t, "leading", r.Leading)
	eventually(t, "the prices are known", func() bool { return r.KnowsPrice(aSpot, 1.0) })
	h.step(ctx, r)
	_, js := h.env.ConnectAs(t, bus.RoleArbiter)
	put(t, js, bus.BucketJobs, "job.tune", ackValue)
	put(t, js, bus.BucketJobs, "state.tune", ackValue)
	rep.saw(t, "bursar_jobs", "job.tune")
	rep.saw(t, "bursar_jobs", "state.tune")
	eventually(t, "the job and its run are written back", func() bool {
		recs, err := jobs.Load(ctx, h.env.JS)
		return err == nil && len(recs) == 1 && recs[0].Spec.Workload.Name == "tune" && recs[0].Run.State != ""
	})
	r.stop(t)

	put(t, js, bus.BucketJobs, "job.tune", ackValue)
	again := newReports()
	r = h.start("a1", func(o *arbiter.Options) { again.tweak(o); o.Interval = jobStep })
	eventually(t, "leading again", r.Leading)
	again.saw(t, "bursar_jobs", "job.tune")
	for range 3 {
		h.step(ctx, r)
	}
	if g := runningGroups(h); len(g) != 1 {
		t.Errorf("after a restart over a corrupt submission the job runs on %v, want one group", g)
	}
}
