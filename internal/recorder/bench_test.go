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
	at := yesterday.Add(6 * time.Hour)
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

// BenchmarkRecorder measures rows per second from JetStream into the embedded engine, the rows
// published as producers publish them: one PublishBatch per collection round, so a batch message
// per node's GPU sweep and one per scrape of a workload's replicas. In the same run it measures
// the baseline, the same payloads decoded, encoded and bulk-inserted straight into the same
// engine (one insert per table, no NATS); the engine alone inserting the encoded rows; and the
// recorder over the same rows published one event per message, as before batches.
func BenchmarkRecorder(b *testing.B) {
	evs := telemetry(benchRows)
	batched, single := bustest.Start(b), bustest.Start(b)
	msgs := publishRounds(b, batched, evs)
	publish(b, single, evs)
	var rec, one, direct, engine time.Duration
	round := 0
	for b.Loop() {
		round++
		rec += recordOnce(b, batched, round, len(msgs))
		one += recordOnce(b, single, round, benchRows)
		d, e := insertDirect(b, msgs)
		direct, engine = direct+d, engine+e
	}
	n := float64(benchRows * round)
	b.ReportMetric(n/rec.Seconds(), "recorder_rows/s")
	b.ReportMetric(n/direct.Seconds(), "direct_rows/s")
	b.ReportMetric(direct.Seconds()/rec.Seconds(), "ratio")
	b.ReportMetric(n/engine.Seconds(), "engine_only_rows/s")
	b.ReportMetric(n/one.Seconds(), "single_event_recorder_rows/s")
	b.ReportMetric(float64(len(msgs)), "batch_messages")
	b.ReportMetric(0, "ns/op")
}

// publishRounds publishes evs one collection round (one observation time) at a time with
// PublishBatch, as the collectors do, and returns the messages that makes.
func publishRounds(b *testing.B, env *bustest.Env, evs []events.Event) []events.Message {
	p := bus.NewPublisher(env.JS)
	var msgs []events.Message
	for start := 0; start < len(evs); {
		end := start + 1
		for end < len(evs) && evs[end].Header().At.Equal(evs[start].Header().At) {
			end++
		}
		if err := p.PublishBatch(context.Background(), evs[start:end]); err != nil {
			b.Fatal(err)
		}
		round, err := events.Batches(evs[start:end], events.BatchLimits{})
		if err != nil {
			b.Fatal(err)
		}
		msgs, start = append(msgs, round...), end
	}
	s, err := env.JS.Stream(context.Background(), bus.Telemetry)
	if err != nil {
		b.Fatal(err)
	}
	if got := s.CachedInfo().State.Msgs; got != uint64(len(msgs)) {
		b.Fatalf("TELEMETRY holds %d messages, want the %d batches", got, len(msgs))
	}
	return msgs
}

// recordOnce runs a recorder with a new consumer over the whole stream into a fresh database
// and returns how long it took until all msgs messages were acked.
func recordOnce(b *testing.B, env *bustest.Env, round, msgs int) time.Duration {
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
	for testutil.ToFloat64(r.metrics.acked.WithLabelValues(bus.Telemetry)) < float64(msgs) {
		time.Sleep(time.Millisecond)
	}
	took := time.Since(began)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	for _, tbl := range []string{"gpu_sample", "tokens_sample"} {
		if got := queryInt(b, st, "SELECT count() AS n FROM "+st.Table(tbl)+" FINAL"); got != benchRows/2 {
			b.Fatalf("recorded %d rows in %s, want %d", got, tbl, benchRows/2)
		}
	}
	b.StartTimer()
	return took
}

// insertDirect decodes and encodes the messages' payloads as the recorder does and inserts them
// in one statement per table; it returns that time, and the time of the inserts alone.
func insertDirect(b *testing.B, msgs []events.Message) (total, engine time.Duration) {
	b.StopTimer()
	st := storetest.New(b)
	ctx := context.Background()
	b.StartTimer()
	began := time.Now()
	dec, ser := newDecoder(), newSeries()
	rows := map[events.Type]*row{}
	for _, m := range msgs {
		t, _ := events.TypeOfSubject(m.Subject)
		evs, err := dec.decodeAll(t, m.Data)
		if err != nil {
			b.Fatal(err)
		}
		if rows[t] == nil {
			rows[t] = &row{}
		}
		for _, e := range evs {
			x := ser.extra(e)
			if err := encode(rows[t], e, &x); err != nil {
				b.Fatal(err)
			}
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
