package recorder

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func publishBatch(t *testing.T, env *bustest.Env, evs []events.Event) {
	t.Helper()
	if err := bus.NewPublisher(env.JS).PublishBatch(testCtx(t), evs); err != nil {
		t.Fatal(err)
	}
}

func TestBatchesAreRecordedRowByRow(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	at := yesterday.Add(6 * time.Hour)
	var sent []events.Event
	for i := range 3 {
		sweep := append(eventstest.Sweep("node-a", 8, at.Add(time.Duration(i)*time.Minute)),
			eventstest.Sweep("node-b", 4, at.Add(time.Duration(i)*time.Minute))...)
		publishBatch(t, env, sweep)
		sent = append(sent, sweep...)
	}
	scrape := sameSubject(events.TypeTokensSample, 6)
	publishBatch(t, env, scrape)
	publish(t, env, eventstest.Sweep("node-c", 1, at)) // a single event among the batches

	reg := prometheus.NewRegistry()
	r := New(env.JS, st, Config{Streams: []string{bus.Telemetry}, Registerer: reg})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	settled(t, env, "recorder", bus.Telemetry)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, table string
		wantRows    int
	}{
		{"every GPU of every sweep", "gpu_sample", len(sent) + 1},
		{"every replica of the scrape", "tokens_sample", len(scrape)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := "SELECT uniqExact(id) AS n FROM " + st.Table(tt.table)
			if got := queryInt(t, st, q); got != int64(tt.wantRows) {
				t.Errorf("%s holds %d distinct events, want %d", tt.table, got, tt.wantRows)
			}
			q = "SELECT count() AS n FROM " + st.Table(tt.table)
			if got := queryInt(t, st, q); got != int64(tt.wantRows) {
				t.Errorf("%s holds %d rows, want %d", tt.table, got, tt.wantRows)
			}
		})
	}
	// 3 rounds of 2 node sweeps, one scrape, one single event.
	if got := testutil.ToFloat64(r.metrics.acked.WithLabelValues(bus.Telemetry)); got != 8 {
		t.Errorf("acked %v messages, want 8", got)
	}
	q := "SELECT sum(utilization_pct) AS n FROM " + st.Table("gpu_sample") + " WHERE node = 'node-a'"
	if got := queryInt(t, st, q); got != 3*(0+10+20+30+40+50+60+70) {
		t.Errorf("node-a's utilization adds up to %d", got)
	}
}

// TestABatchWithAnEventOutOfTimeRangeGoesToDLQ: a batch message whose event carries a time the
// history cannot hold (DateTime64 ends in 2299), from a publisher that does not validate, is
// refused whole at decode, as any batch with an invalid event, and goes to DLQ naming the event.
func TestABatchWithAnEventOutOfTimeRangeGoesToDLQ(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	at := yesterday.Add(6 * time.Hour)
	sweep := eventstest.Sweep("node-a", 3, at)
	sweep[1].Header().At = time.Date(2050, 1, 1, 0, 0, 0, 0, time.UTC)
	data := bytes.Replace(eventstest.Batch(t, sweep), []byte("2050-01-01T00:00:00Z"), []byte("2350-01-01T00:00:00Z"), 1)
	if _, err := env.JS.Publish(testCtx(t), sweep[0].Subject(), data); err != nil {
		t.Fatal(err)
	}
	stop := start(t, env, st, Config{Streams: []string{bus.Telemetry}})
	settled(t, env, "recorder", bus.Telemetry)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); got != 0 {
		t.Errorf("gpu_sample holds %d rows of a batch refused at decode", got)
	}
	cons, err := env.JS.OrderedConsumer(testCtx(t), bus.DLQ, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatalf("nothing in DLQ: %v", err)
	}
	if r := m.Headers().Get(bus.HeaderReason); !strings.Contains(r, "events[1].at") || !strings.Contains(r, "2350-01-01T00:00:00Z") {
		t.Errorf("DLQ reason %q does not name events[1].at and its value", r)
	}
}
