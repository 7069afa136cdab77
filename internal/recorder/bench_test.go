package recorder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

const benchRows = 200_000

// telemetry returns n GPU and token samples, the recorder's bulk traffic, half of each.
func telemetry(n int) []events.Event {
	at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	out := make([]events.Event, 0, n)
	for i := range n {
		t := at.Add(time.Duration(i/256) * time.Second)
		if i%2 == 0 {
			out = append(out, events.Stamp(&events.GPUSample{Meta: events.Meta{At: t}, Location: "aws-use1",
				Node: fmt.Sprintf("node-%d", i%32), UUID: fmt.Sprintf("GPU-%d", i%256), Index: i % 8,
				Model: "H100-80GB", UtilizationPct: float64(i % 100), MemoryUsedBytes: int64(i%80) << 30,
				MemoryTotalBytes: 80 << 30, PowerW: 400 + float64(i%300), TemperatureC: 40 + float64(i%40)}))
			continue
		}
		out = append(out, events.Stamp(&events.TokensSample{Meta: events.Meta{At: t}, Location: "aws-use1",
			Workload: "llm", Replica: fmt.Sprintf("llm-%d", i%256), Server: "vllm",
			PromptTokens: int64(i) * 100, GenerationTokens: int64(i) * 300, Requests: int64(i)}))
	}
	return out
}

// BenchmarkRecorder measures rows per second from JetStream into the embedded engine, and in
// the same run the same rows decoded, encoded and bulk-inserted straight into the same engine
// (one insert per table, no NATS), and the engine alone inserting the encoded rows.
func BenchmarkRecorder(b *testing.B) {
	env := bustest.Start(b)
	evs := telemetry(benchRows)
	payloads := make([][]byte, len(evs))
	p := bus.NewPublisher(env.JS)
	for i, e := range evs {
		payloads[i], _ = events.Encode(e)
		if _, err := p.PublishAsync(e); err != nil {
			b.Fatal(err)
		}
		if i%2000 == 1999 {
			if err := p.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := p.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	var rec, direct, engine time.Duration
	round := 0
	for b.Loop() {
		round++
		rec += recordOnce(b, env, round)
		d, e := insertDirect(b, evs, payloads)
		direct, engine = direct+d, engine+e
	}
	n := float64(benchRows * round)
	b.ReportMetric(n/rec.Seconds(), "recorder_rows/s")
	b.ReportMetric(n/direct.Seconds(), "direct_rows/s")
	b.ReportMetric(direct.Seconds()/rec.Seconds(), "ratio")
	b.ReportMetric(n/engine.Seconds(), "engine_only_rows/s")
	b.ReportMetric(0, "ns/op")
}

// recordOnce runs a recorder with a new consumer over the whole stream into a fresh database
// and returns how long it took until every message was acked.
func recordOnce(b *testing.B, env *bustest.Env, round int) time.Duration {
	b.StopTimer()
	st := storetest.New(b)
	reg := prometheus.NewRegistry()
	cfg := Config{Durable: fmt.Sprintf("bench%d", round), Streams: []string{bus.Telemetry}, Registerer: reg}
	r := New(env.JS, st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	b.StartTimer()
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for testutil.ToFloat64(r.metrics.acked.WithLabelValues(bus.Telemetry)) < benchRows {
		time.Sleep(time.Millisecond)
	}
	took := time.Since(began)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if got := queryInt(b, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")+" FINAL"); got != benchRows/2 {
		b.Fatalf("recorded %d GPU samples, want %d", got, benchRows/2)
	}
	b.StartTimer()
	return took
}

// insertDirect decodes and encodes the payloads as the recorder does and inserts them in one
// statement per table; it returns that time, and the time of the inserts alone.
func insertDirect(b *testing.B, evs []events.Event, payloads [][]byte) (total, engine time.Duration) {
	b.StopTimer()
	st := storetest.New(b)
	ctx := context.Background()
	b.StartTimer()
	began := time.Now()
	dec, ser := newDecoder(), newSeries()
	rows := map[events.Type]*row{}
	for i, data := range payloads {
		t := evs[i].EventType()
		e, err := dec.decode(t, data)
		if err != nil {
			b.Fatal(err)
		}
		x := ser.extra(e)
		if rows[t] == nil {
			rows[t] = &row{}
		}
		if err := encode(rows[t], e, &x); err != nil {
			b.Fatal(err)
		}
	}
	insStart := time.Now()
	for t, r := range rows {
		if err := st.Insert(ctx, tables[t].name, tables[t].columns, "direct", r.b); err != nil {
			b.Fatal(err)
		}
	}
	engine, total = time.Since(insStart), time.Since(began)
	return total, engine
}
