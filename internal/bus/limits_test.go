package bus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// TestEveryStreamHasLimits: Ensure gives every stream a byte limit, a message size limit and an
// age, and every bucket a byte limit (and, but for the books, a value size limit).
func TestEveryStreamHasLimits(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fills, err := bus.Fills(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	if len(fills) != len(bus.Streams(bus.Options{}))+len(bus.Buckets(bus.Options{})) {
		t.Fatalf("fills of %d streams, want every stream and bucket", len(fills))
	}
	for _, f := range fills {
		st, err := env.JS.Stream(ctx, f.Stream)
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		bucket := strings.HasPrefix(f.Stream, "KV_")
		if cfg.MaxBytes <= 0 || f.MaxBytes != cfg.MaxBytes {
			t.Errorf("%s: MaxBytes %d, want a limit", f.Stream, cfg.MaxBytes)
		}
		if cfg.MaxMsgSize <= 0 && f.Stream != "KV_"+bus.BucketPlacement {
			t.Errorf("%s: MaxMsgSize %d, want a limit", f.Stream, cfg.MaxMsgSize)
		}
		if !bucket && cfg.MaxAge <= 0 {
			t.Errorf("%s: MaxAge %s, want one", f.Stream, cfg.MaxAge)
		}
	}
}

// TestAFloodStopsAtTheLimit: the collector's key publishing far more than MARKET may hold leaves
// it at its limit, and the fill metric says so.
func TestAFloodStopsAtTheLimit(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const limit = 256 << 10
	if err := bus.Ensure(ctx, env.JS, bus.Options{MarketMaxBytes: limit}); err != nil {
		t.Fatal(err)
	}
	_, js := env.ConnectAs(t, bus.RoleCollector)
	body := []byte(strings.Repeat("x", 16<<10))
	for i := range 64 { // 1 MiB, four times the limit
		if _, err := js.Publish(ctx, "bursar.price.aws.flood", body); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if _, err := js.Publish(ctx, "bursar.price.aws.flood", make([]byte, bus.DefaultMaxPayloadPerMsg+1)); err == nil {
		t.Fatal("a message over the size limit was stored")
	}
	fills, err := bus.Fills(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	if fills[0].Stream != bus.Market || fills[0].Bytes > limit || fills[0].Ratio() < 0.8 {
		t.Fatalf("MARKET after the flood: %+v, want full to its %d bytes and no more", fills[0], limit)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(bus.NewFillCollector(env.JS))
	if got := gauge(t, reg, "bursar_stream_max_bytes", bus.Market); got != limit {
		t.Fatalf("bursar_stream_max_bytes{stream=MARKET} = %g, want %d", got, limit)
	}
	if got := gauge(t, reg, "bursar_stream_fill_ratio", bus.Market); got != fills[0].Ratio() {
		t.Fatalf("bursar_stream_fill_ratio{stream=MARKET} = %g, want %g", got, fills[0].Ratio())
	}
	if n, err := testutil.GatherAndCount(reg, "bursar_stream_fill_ratio"); err != nil || n != len(fills) {
		t.Fatalf("bursar_stream_fill_ratio has %d series (%v), want %d", n, err, len(fills))
	}
}

// gauge is the value of name{stream=stream} in reg, failing t when there is none.
func gauge(t *testing.T, reg *prometheus.Registry, name, stream string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == name && m.GetLabel()[0].GetValue() == stream {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{stream=%q}", name, stream)
	return 0
}
