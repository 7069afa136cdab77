package recorder

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/store/storetest"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// TestADeliveryLostOnItsWayIsRecorded: one delivery in the middle of a batch is lost between the
// consumer's server and the recorder (a route cut in a cluster drops it). Its redelivery comes
// after the batch around it was stored; every event is recorded once. Before, the redelivery
// was taken for a repeat of a stored message (its sequence was below the last one batched) and
// acked unrecorded: the event was lost without a word, as the soak's 4 replica.state events were.
func TestADeliveryLostOnItsWayIsRecorded(t *testing.T) {
	for _, c := range []struct {
		name string
		seq  uint64 // the stream sequence whose first delivery is lost
	}{
		{"in the middle", 20},
		{"the first after the start", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, st := bustest.Start(t), storetest.New(t)
			at := yesterday.Add(10 * time.Hour)
			publish(t, env, sweeps("n", 50, at))
			var lost atomic.Int64
			logs := &testkit.Log{}
			reg := prometheus.NewRegistry()
			cfg := Config{Streams: []string{bus.Telemetry}, AckWait: 300 * time.Millisecond, Registerer: reg,
				Log: slog.New(slog.NewTextHandler(logs, nil))}
			js := &faultyBus{JetStream: env.JS, deliver: func(m jetstream.Msg) jetstream.Msg {
				if md, err := m.Metadata(); err == nil && md.Sequence.Stream == c.seq && lost.CompareAndSwap(0, 1) {
					return nil
				}
				return m
			}}
			startOn(t, js, st, cfg)
			settled(t, env, "recorder", bus.Telemetry)
			if lost.Load() != 1 {
				t.Fatalf("%d deliveries lost, want 1: the test tested nothing", lost.Load())
			}
			tbl := st.Table("gpu_sample")
			if n := queryInt(t, st, fmt.Sprintf("SELECT uniqExact(id) AS n FROM %s", tbl)); n != 50 {
				t.Errorf("%d of the 50 events recorded", n)
			}
			if n := queryInt(t, st, fmt.Sprintf("SELECT count() AS n FROM %s", tbl)); n != 50 {
				t.Errorf("%d rows for 50 events", n)
			}
			if !strings.Contains(logs.String(), "lost on its way") {
				t.Errorf("the lost delivery is not in the log:\n%s", logs.String())
			}
			if n := restartsOf(t, reg, bus.Telemetry, causeLostDelivery); n != 1 {
				t.Errorf("%v restarts for a lost delivery counted, want one", n)
			}
		})
	}
}
