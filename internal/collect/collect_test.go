package collect

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/pricesource"
)

var t0 = time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)

// catalogCopy writes the first n data rows of the real AWS SkyPilot catalog to a temp file, so
// the collector runs a real source on real rows, and returns its path.
func catalogCopy(t *testing.T, n int) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "prices", "skypilot-catalog", "aws_vms_gpu_subset.csv")
	f, err := os.Open(src)
	if err != nil {
		t.Skipf("real catalog %s not present: %v", src, err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for i := 0; i <= n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	path := filepath.Join(t.TempDir(), "aws_vms.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// marketEvents counts the price events MARKET holds, a batch message counting its events.
func marketEvents(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	n := uint64(0)
	for _, m := range marketMessages(t, js) {
		evs, err := events.DecodeAll(m)
		if err != nil {
			t.Fatal(err)
		}
		n += uint64(len(evs))
	}
	return n
}

// marketMessages returns the payloads MARKET holds, in order.
func marketMessages(t *testing.T, js jetstream.JetStream) [][]byte {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, bus.Market)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Data)
	}
	return out
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestCollectorPublishesChangesToJetStream is the done-when check: one event per offer on the
// first run, nothing on an identical second run, exactly one on a price change.
func TestCollectorPublishesChangesToJetStream(t *testing.T) {
	env := bustest.Start(t)
	path := catalogCopy(t, 40)
	reg := prometheus.NewRegistry()
	c := New(bus.NewPublisher(env.JS), quiet(), NewMetrics(reg))
	src := &pricesource.SkyPilotFiles{Paths: []string{path}}
	job := Job{Source: src, Timeout: 5 * time.Second}
	ctx := context.Background()

	first, err := c.RunOnce(ctx, job, t0, true)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := c.Catalog(src.Name())
	if first == 0 || first != len(cat.Offers) || marketEvents(t, env.JS) != uint64(first) {
		t.Fatalf("first run published %d, catalog has %d offers, stream holds %d", first, len(cat.Offers), marketEvents(t, env.JS))
	}

	second, err := c.RunOnce(ctx, job, t0.Add(10*time.Minute), false)
	if err != nil || second != 0 || marketEvents(t, env.JS) != uint64(first) {
		t.Fatalf("identical run published %d (err %v), stream holds %d; want nothing new", second, err, marketEvents(t, env.JS))
	}

	// g4dn.xlarge in ap-northeast-1 (first data row) goes from 0.71 to 0.75 on demand.
	data, _ := os.ReadFile(path)
	changed := strings.Replace(string(data), "g4dn.xlarge,T4,1.0,4.0,16.0,0.71,", "g4dn.xlarge,T4,1.0,4.0,16.0,0.75,", 1)
	if changed == string(data) {
		t.Fatal("test row not found in the catalog copy")
	}
	if err := os.WriteFile(path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	third, err := c.RunOnce(ctx, job, t0.Add(20*time.Minute), false)
	if err != nil || third != 1 || marketEvents(t, env.JS) != uint64(first+1) {
		t.Fatalf("price change published %d (err %v), stream holds %d; want exactly 1 more", third, err, marketEvents(t, env.JS))
	}
	last := lastPrice(t, env.JS)
	if last.InstanceType != "g4dn.xlarge" || last.USDPerHour != 0.75 || last.GPUModel != "T4" ||
		last.Market != events.OnDemand || last.Subject() != "bursar.price.aws.ap-northeast-1" {
		t.Errorf("published event = %+v", last)
	}
	if got := testutil.ToFloat64(c.metrics.published.WithLabelValues(src.Name())); got != float64(first+1) {
		t.Errorf("published metric = %v, want %d", got, first+1)
	}
	if got := testutil.ToFloat64(c.metrics.offers.WithLabelValues(src.Name())); got != float64(len(cat.Offers)) {
		t.Errorf("offers metric = %v", got)
	}
}

func lastPrice(t *testing.T, js jetstream.JetStream) *events.PriceObserved {
	t.Helper()
	s, err := js.Stream(context.Background(), bus.Market)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(context.Background(), "bursar.price.>")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := events.DecodeAll(msg.Data)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := evs[len(evs)-1].(*events.PriceObserved)
	if !ok {
		t.Fatalf("last event is %T", evs[len(evs)-1])
	}
	return p
}

// TestSnapshotRepublishAndDedup: a snapshot re-publishes every offer; the same snapshot sent
// again (same observation time, so same ids) is dropped by JetStream's duplicate window.
func TestSnapshotRepublishAndDedup(t *testing.T) {
	env := bustest.Start(t)
	path := catalogCopy(t, 10)
	c := New(bus.NewPublisher(env.JS), quiet(), nil)
	job := Job{Source: &pricesource.SkyPilotFiles{Paths: []string{path}}}
	ctx := context.Background()
	n, err := c.RunOnce(ctx, job, t0, true)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.RunOnce(ctx, job, t0, true)
	if err != nil || again != n || marketEvents(t, env.JS) != uint64(n) {
		t.Fatalf("same-time snapshot sent %d (err %v), stream holds %d; want %d sent and deduplicated", again, err, marketEvents(t, env.JS), n)
	}
	later, err := c.RunOnce(ctx, job, t0.Add(6*time.Hour), true)
	if err != nil || later != n || marketEvents(t, env.JS) != uint64(2*n) {
		t.Fatalf("later snapshot sent %d, stream holds %d; want %d more", later, marketEvents(t, env.JS), n)
	}
}

// TestFailedRunsKeepLastGoodAndGoStale: a source that starts failing keeps its last good
// catalog, publishes nothing, and is marked stale after StaleAfter failed runs.
func TestFailedRunsKeepLastGoodAndGoStale(t *testing.T) {
	env := bustest.Start(t)
	path := catalogCopy(t, 10)
	reg := prometheus.NewRegistry()
	c := New(bus.NewPublisher(env.JS), quiet(), NewMetrics(reg))
	src := &pricesource.SkyPilotFiles{Paths: []string{path}}
	job := Job{Source: src, StaleAfter: 2}
	ctx := context.Background()
	n, err := c.RunOnce(ctx, job, t0, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("InstanceType,AcceleratorName\ntruncated"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, wantStale := range []bool{false, true} {
		if _, err := c.RunOnce(ctx, job, t0.Add(time.Duration(i+1)*time.Minute), false); err == nil {
			t.Fatal("a broken file did not fail the run")
		}
		if c.Stale(src.Name()) != wantStale {
			t.Errorf("after %d failures stale = %v, want %v", i+1, !wantStale, wantStale)
		}
	}
	cat, ok := c.Catalog(src.Name())
	if !ok || len(cat.Offers) != n || marketEvents(t, env.JS) != uint64(n) {
		t.Errorf("last good catalog has %d offers (kept %v), stream %d; want %d and nothing new", len(cat.Offers), ok, marketEvents(t, env.JS), n)
	}
	if got := testutil.ToFloat64(c.metrics.stale.WithLabelValues(src.Name())); got != 1 {
		t.Errorf("stale metric = %v, want 1", got)
	}
	if got := testutil.ToFloat64(c.metrics.errors.WithLabelValues(src.Name(), "decode")); got != 2 {
		t.Errorf("decode errors = %v, want 2", got)
	}
	// Recovery clears the stale mark.
	if err := os.WriteFile(path, []byte(mustRead(t, catalogCopy(t, 10))), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(ctx, job, t0.Add(time.Hour), false); err != nil || c.Stale(src.Name()) {
		t.Errorf("recovered run: err %v, stale %v", err, c.Stale(src.Name()))
	}
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
