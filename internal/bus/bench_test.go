package bus_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
)

const benchEvents = 50_000

func gpuSamples(round, n int) []events.Event {
	out := make([]events.Event, n)
	for i := range out {
		e := &events.GPUSample{Meta: events.Meta{At: at.Add(time.Duration(round*n+i) * time.Millisecond)},
			Location: "bench", Node: fmt.Sprintf("node-%d", i%16), UUID: fmt.Sprintf("GPU-%d", i%128),
			Index: i % 8, Model: "H100-80GB", UtilizationPct: float64(i % 100),
			MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 80 << 30, PowerW: 500, TemperatureC: 60}
		out[i] = events.Stamp(e)
	}
	return out
}

// BenchmarkPublishToHandler measures events per second from publish to handler through the
// embedded JetStream, for Bursar's publisher and consumer (encode, dedup id, decode, validate,
// ack) and, in the same run, for a raw nats.go async publish/consume loop carrying the same bytes.
func BenchmarkPublishToHandler(b *testing.B) {
	env := bustest.Start(b)
	var rawTotal, bursarTotal time.Duration
	for round := 0; b.Loop(); round++ {
		// Distinct facts for each loop: JetStream would drop re-published ids as duplicates.
		rawTotal += rawLoop(b, env, round, gpuSamples(2*round, benchEvents))
		bursarTotal += bursarLoop(b, env, round, gpuSamples(2*round+1, benchEvents))
	}
	raw := float64(benchEvents*b.N) / rawTotal.Seconds()
	ours := float64(benchEvents*b.N) / bursarTotal.Seconds()
	b.ReportMetric(raw, "raw_events/s")
	b.ReportMetric(ours, "bursar_events/s")
	b.ReportMetric(ours/raw, "ratio")
	b.ReportMetric(0, "ns/op")
}

func purge(b *testing.B, env *bustest.Env) {
	s, err := env.JS.Stream(context.Background(), bus.Telemetry)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Purge(context.Background()); err != nil {
		b.Fatal(err)
	}
}

func rawLoop(b *testing.B, env *bustest.Env, round int, evs []events.Event) time.Duration {
	purge(b, env)
	payloads := make([][]byte, len(evs))
	for i, e := range evs {
		payloads[i], _ = events.Encode(e)
	}
	ctx := context.Background()
	cons, err := env.JS.CreateOrUpdateConsumer(ctx, bus.Telemetry, jetstream.ConsumerConfig{
		Durable: fmt.Sprintf("raw-%d", round), AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 4096})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	var n atomic.Int64
	start := time.Now()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		_ = m.Ack()
		if n.Add(1) == int64(len(evs)) {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	for i, p := range payloads {
		if _, err := env.JS.PublishAsync(evs[i].Subject(), p, jetstream.WithMsgID(evs[i].Header().ID)); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	elapsed := time.Since(start)
	cc.Stop()
	return elapsed
}

func bursarLoop(b *testing.B, env *bustest.Env, round int, evs []events.Event) time.Duration {
	purge(b, env)
	pub := bus.NewPublisher(env.JS)
	done := make(chan struct{})
	var n atomic.Int64
	handler := func(context.Context, events.Event) error {
		if n.Add(1) == int64(len(evs)) {
			close(done)
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	spec := bus.ConsumerSpec{Stream: bus.Telemetry, Durable: fmt.Sprintf("bursar-%d", round)}
	start := time.Now()
	go func() {
		_ = bus.NewConsumer(env.JS, spec, handler, slog.New(slog.DiscardHandler)).Run(ctx)
		close(stopped)
	}()
	for _, e := range evs {
		if _, err := pub.PublishAsync(e); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	elapsed := time.Since(start)
	cancel()
	<-stopped
	return elapsed
}
