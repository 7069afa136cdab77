package recorder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// recent is a time an hour ago: raw telemetry older than its TTL (30 days) may be dropped by any
// merge, so the samples these tests count are recent.
func recent() time.Time { return time.Now().UTC().Truncate(time.Second).Add(-time.Hour) }

// deadLetters reads every message in DLQ.
func deadLetters(t *testing.T, env *bustest.Env) []jetstream.Msg {
	t.Helper()
	cons, err := env.JS.OrderedConsumer(testCtx(t), bus.DLQ, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for {
		m, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		if errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoMessages) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

// TestOneRefusedEventDoesNotHoldTheStream (issue 27): ClickHouse refused a batch for one event's
// value, and the recorder retried it for ever with its acks held: nothing more was recorded from
// the stream. Now the batch is split until the refused event is found; it goes to DLQ with the
// store's reason, the other 999 are recorded and everything is acked, and the stream flows on.
//
// The poisoned event is valid: validation refuses every value it knows the store cannot hold
// (the time of the issue included), so the store is given a rule validation cannot know, a
// CHECK constraint an operator might add on the table, which the real engine enforces (code 469).
func TestOneRefusedEventDoesNotHoldTheStream(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	if err := st.Exec(testCtx(t), "ALTER TABLE "+st.Table("gpu_sample")+" ADD CONSTRAINT no_poison CHECK node != 'poisoned'"); err != nil {
		t.Fatal(err)
	}
	at := recent()
	var evs []events.Event
	for i := range 1000 {
		evs = append(evs, eventstest.Sweep(fmt.Sprint("node-", i), 1, at.Add(time.Duration(i)*time.Millisecond))...)
	}
	poison := evs[437].(*events.GPUSample)
	poison.Node, poison.ID = "poisoned", ""
	events.Stamp(poison)
	publish(t, env, evs)

	reg := prometheus.NewRegistry()
	r := New(env.JS, st, Config{Streams: []string{bus.Telemetry}, Registerer: reg, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	settled(t, env, "recorder", bus.Telemetry)

	if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); got != 999 {
		t.Errorf("gpu_sample holds %d rows, want the 999 good events", got)
	}
	q := "SELECT count() AS n FROM " + st.Table("gpu_sample") + " WHERE id = '" + poison.ID + "'"
	if got := queryInt(t, st, q); got != 0 {
		t.Errorf("the refused event was stored")
	}
	dead := deadLetters(t, env)
	if len(dead) != 1 {
		t.Fatalf("DLQ holds %d messages, want the poisoned one", len(dead))
	}
	reason := dead[0].Headers().Get(bus.HeaderReason)
	got, err := events.Decode(dead[0].Data())
	if err != nil || got.Header().ID != poison.ID {
		t.Errorf("DLQ holds %v (%v), want the poisoned event %s", got, err, poison.ID)
	}
	for _, want := range []string{"store refused", "gpu_sample", "code 469", "no_poison"} {
		if !strings.Contains(reason, want) {
			t.Errorf("DLQ reason %q does not say %q", reason, want)
		}
	}
	if n := testutil.ToFloat64(r.metrics.refused.WithLabelValues(bus.Telemetry)); n != 1 {
		t.Errorf("bursar_recorder_refused_messages_total = %v, want 1", n)
	}
	if n := testutil.ToFloat64(r.metrics.acked.WithLabelValues(bus.Telemetry)); n != 1000 {
		t.Errorf("acked %v messages, want 1000", n)
	}

	more := eventstest.Sweep("after", 10, at.Add(time.Hour))
	publish(t, env, more)
	settled(t, env, "recorder", bus.Telemetry)
	if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); got != 1009 {
		t.Errorf("gpu_sample holds %d rows after 10 more, want 1009: the stream stopped", got)
	}
}

// TestARefusedEventOfABatchMessageSetsAsideOnlyThatMessage: the rows the other events of the
// message wrote are stored; the message goes to DLQ naming the refused event by id.
func TestARefusedEventOfABatchMessageSetsAsideOnlyThatMessage(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	if err := st.Exec(testCtx(t), "ALTER TABLE "+st.Table("gpu_sample")+" ADD CONSTRAINT cool CHECK temperature_c < 90"); err != nil {
		t.Fatal(err)
	}
	at := recent()
	sweep := eventstest.Sweep("node-a", 8, at)
	hot := sweep[5].(*events.GPUSample)
	hot.TemperatureC = 95 // valid (up to 150), refused by this store
	publishBatch(t, env, sweep)
	publishBatch(t, env, eventstest.Sweep("node-b", 8, at))
	stop := start(t, env, st, Config{Streams: []string{bus.Telemetry}})
	settled(t, env, "recorder", bus.Telemetry)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); got != 15 {
		t.Errorf("gpu_sample holds %d rows, want all but the hot GPU's", got)
	}
	dead := deadLetters(t, env)
	if len(dead) != 1 {
		t.Fatalf("DLQ holds %d messages, want node-a's sweep", len(dead))
	}
	if r := dead[0].Headers().Get(bus.HeaderReason); !strings.Contains(r, "event "+hot.ID) || !strings.Contains(r, "code 469") {
		t.Errorf("DLQ reason %q does not name the refused event and why", r)
	}
}

// failing is the real store behind a switch that makes inserts fail with err.
type failing struct {
	*store.Store
	err  error
	left atomic.Int64 // failures still to come
}

func (f *failing) Insert(ctx context.Context, table, columns, token string, rows []byte) error {
	if f.left.Add(-1) >= 0 {
		return f.err
	}
	return f.Store.Insert(ctx, table, columns, token, rows)
}

// TestAFailingStoreIsWaitedForNotSetAside: a store down, overloaded, read only, failing without a
// code (the soak's outage), or refusing the statement whatever its rows (a schema that does not
// match) holds the stream until it recovers; nothing goes to DLQ, and everything is recorded.
func TestAFailingStoreIsWaitedForNotSetAside(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"down", errors.Join(store.ErrUnavailable, errors.New("dial tcp 127.0.0.1:9000: connection refused"))},
		{"no code", errors.New("soak: the history store refuses writes")},
		{"read only", &store.Error{Code: 242, Message: "Table is in readonly mode"}},
		{"a file it cannot write", &store.Error{Message: "Cannot open file /data/store/tmp_insert: Read-only file system"}},
		{"an unknown column", &store.Error{Code: 16, Message: "No such column delta_requests"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, st := bustest.Start(t), storetest.New(t)
			f := &failing{Store: st, err: fmt.Errorf("inserting into bursar.gpu_sample: %w", tt.err)}
			f.left.Store(5)
			evs := eventstest.Sweep("node-a", 50, recent())
			publish(t, env, evs)
			reg := prometheus.NewRegistry()
			r := New(env.JS, f, Config{Streams: []string{bus.Telemetry}, Registerer: reg, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			settled(t, env, "recorder", bus.Telemetry)
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); got != int64(len(evs)) {
				t.Errorf("gpu_sample holds %d rows after the failures, want %d", got, len(evs))
			}
			if dead := deadLetters(t, env); len(dead) != 0 {
				t.Errorf("%d messages went to DLQ: %s", len(dead), dead[0].Headers().Get(bus.HeaderReason))
			}
			if n := testutil.ToFloat64(r.metrics.split.WithLabelValues(bus.Telemetry)); n != 0 {
				t.Errorf("split %v batches on a failing store", n)
			}
		})
	}
}

// TestAnEventDatedAheadGoesToDLQ (issue 27): a gpu.sample dated 2099 passes every check that
// reads no clock; the recorder refuses it (and one a minute past the allowed skew) by its clock,
// and records one within the skew.
func TestAnEventDatedAheadGoesToDLQ(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	ahead := eventstest.Sweep("ahead", 1, time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	skewed := eventstest.Sweep("skewed", 1, now.Add(events.MaxSkew+time.Minute))
	within := eventstest.Sweep("within", 1, now.Add(events.MaxSkew/2))
	publish(t, env, slices.Concat(ahead, skewed, within))
	stop := start(t, env, st, Config{Streams: []string{bus.Telemetry}})
	settled(t, env, "recorder", bus.Telemetry)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")+" WHERE node = 'within'"); got != 1 {
		t.Errorf("the sample within the skew was not recorded")
	}
	if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); got != 1 {
		t.Errorf("gpu_sample holds %d rows, want the one within the skew", got)
	}
	dead := deadLetters(t, env)
	if len(dead) != 2 {
		t.Fatalf("DLQ holds %d messages, want the two dated ahead", len(dead))
	}
	if r := dead[0].Headers().Get(bus.HeaderReason); !strings.Contains(r, `field "at"`) || !strings.Contains(r, "2099-01-01T00:00:00Z") || !strings.Contains(r, "clock") {
		t.Errorf("DLQ reason %q does not name the field, the value and what to check", r)
	}
}
