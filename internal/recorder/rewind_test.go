package recorder

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// TestAStreamThatLostMessagesIsRecordedAgain is the outside probe's case: 16 KiB of garbage in
// the middle of TELEMETRY's message block while the server is down, so it comes back shorter
// than what the recorder had read. The events published after that are recorded, whether the
// recorder starts again with the server or ran through its restart, and the reset is logged as
// an error and counted. Before, the consumer waited for sequences past its old floor and
// recorded nothing, without a word.
func TestAStreamThatLostMessagesIsRecordedAgain(t *testing.T) {
	for _, through := range []bool{false, true} {
		t.Run(map[bool]string{false: "recorder restarted", true: "recorder running through"}[through], func(t *testing.T) {
			env, st := bustest.Start(t), storetest.New(t)
			at := yesterday.Add(10 * time.Hour)
			publish(t, env, sweeps("old", 2000, at))
			reg, logs := prometheus.NewRegistry(), &testkit.Log{}
			cfg := Config{Streams: []string{bus.Telemetry}, Check: 100 * time.Millisecond, Registerer: reg,
				Log: slog.New(slog.NewTextHandler(logs, nil))}
			stop := start(t, env, st, cfg)
			settled(t, env, "recorder", bus.Telemetry)
			if !through {
				if err := stop(); err != nil {
					t.Fatal(err)
				}
			}
			env.Restart(t, func() {
				if err := testkit.Damage(filepath.Join(bus.StreamDir(env.StoreDir, bus.Telemetry), "msgs")); err != nil {
					t.Fatal(err)
				}
			})
			s, err := env.JS.Stream(testCtx(t), bus.Telemetry)
			if err != nil {
				t.Fatal(err)
			}
			if last := s.CachedInfo().State.LastSeq; last >= 2000 {
				t.Fatalf("the damaged stream still ends at %d: the test damaged nothing", last)
			}
			if !through {
				cfg.Registerer = prometheus.NewRegistry()
				reg = cfg.Registerer.(*prometheus.Registry)
				start(t, env, st, cfg)
			}
			later := at.Add(time.Hour)
			publish(t, env, sweeps("new", 100, later))
			recordedAt(t, st, later, 100)
			if n := restartsOf(t, reg, bus.Telemetry, causeBehind); n < 1 {
				t.Errorf("%v restarts for a stream behind its consumer counted, want one or more", n)
			}
			if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "lost messages") {
				t.Errorf("no error in the log about the lost messages:\n%s", out)
			}
		})
	}
}

// TestAStreamThatRenumberedWhatWasReadIsRecordedAgain: the stream comes back short, and new
// messages take it past what the running recorder had read before the watch sees it behind (a
// cluster leads with the damaged replica, and the collector goes on at once). The stream then
// holds new messages at sequences the consumer had passed. They are recorded, and the reset is
// logged as an error and counted. Before, the consumer went on after its old position and the
// new messages at the sequences it had passed were never recorded (1,003 of 2,000 here), without a word.
func TestAStreamThatRenumberedWhatWasReadIsRecordedAgain(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	at := yesterday.Add(10 * time.Hour)
	publish(t, env, sweeps("old", 2000, at))
	reg, logs := prometheus.NewRegistry(), &testkit.Log{}
	start(t, env, st, Config{Streams: []string{bus.Telemetry}, Check: time.Hour, Registerer: reg,
		Log: slog.New(slog.NewTextHandler(logs, nil))})
	settled(t, env, "recorder", bus.Telemetry)
	env.Restart(t, func() {
		if err := testkit.Damage(filepath.Join(bus.StreamDir(env.StoreDir, bus.Telemetry), "msgs")); err != nil {
			t.Fatal(err)
		}
	})
	later := at.Add(time.Hour)
	publish(t, env, sweeps("new", 2000, later))
	s, err := env.JS.Stream(testCtx(t), bus.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	if last := s.CachedInfo().State.LastSeq; last <= 2000 || last >= 4000 {
		t.Fatalf("the stream ends at %d: the test renumbered nothing", last)
	}
	recordedAt(t, st, later, 2000)
	if n := restartsOf(t, reg, bus.Telemetry, causeRenumbered); n != 1 {
		t.Errorf("%v restarts for a renumbered stream counted, want one", n)
	}
	if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "numbered new ones") {
		t.Errorf("no error in the log about the renumbered stream:\n%s", out)
	}
}

// restartsOf is bursar_recorder_restarts_total of stream for c in reg.
func restartsOf(t *testing.T, reg *prometheus.Registry, stream string, c cause) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "bursar_recorder_restarts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["stream"] == stream && labels["cause"] == string(c) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// recordedAt waits (30 s at most) until the n GPU samples published at t after the damage are
// recorded.
func recordedAt(t *testing.T, st *store.Store, at time.Time, n int64) {
	t.Helper()
	q := fmt.Sprintf("SELECT count() AS n FROM %s WHERE at = %s", st.Table("gpu_sample"), chTime(at))
	deadline := time.Now().Add(30 * time.Second)
	for queryInt(t, st, q) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d events published after the damage were recorded", queryInt(t, st, q), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sweeps is n GPU samples of distinct nodes at t, one event per message.
func sweeps(prefix string, n int, t time.Time) []events.Event {
	var out []events.Event
	for i := range n {
		out = append(out, eventstest.Sweep(fmt.Sprintf("%s-%d", prefix, i), 1, t)...)
	}
	return out
}

// chTime is t as a ClickHouse DateTime64(3) literal.
func chTime(t time.Time) string {
	return fmt.Sprintf("toDateTime64('%s', 3, 'UTC')", t.UTC().Format("2006-01-02 15:04:05.000"))
}

// TestLostAcksAreSentAgain: the acks of stored batches are lost (a node restarting drops them).
// The redelivered messages are acked again, so the consumer catches up; before, they were
// skipped as already batched and came back every AckWait, forever.
func TestLostAcksAreSentAgain(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	publish(t, env, sweeps("n", 50, yesterday.Add(10*time.Hour)))
	var lost atomic.Int64
	js := &faultyBus{JetStream: env.JS, deliver: func(m jetstream.Msg) jetstream.Msg {
		if md, err := m.Metadata(); err == nil && md.NumDelivered == 1 {
			return ackLost{Msg: m, lost: &lost} // every first delivery's ack is lost
		}
		return m
	}}
	startOn(t, js, st, Config{Streams: []string{bus.Telemetry}, AckWait: 300 * time.Millisecond})
	settled(t, env, "recorder", bus.Telemetry)
	if lost.Load() == 0 {
		t.Fatal("no acks were lost: the test tested nothing")
	}
	if n := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); n != 50 {
		t.Errorf("%d rows, want 50", n)
	}
}

// TestAStalledReadIsStartedOver: the recorder's first read never gets a message: its pull
// request was lost (a consumer leader change can drop it without nats.go asking again:
// nats-io/nats.go#2063), and the consumer holds the messages with nobody pulling. The watch sees
// it, the read starts over, and every event is recorded; before the watch, the recorder on the
// soak's cut node waited for ever.
func TestAStalledReadIsStartedOver(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	publish(t, env, sweeps("n", 50, yesterday.Add(10*time.Hour)))
	js := &faultyBus{JetStream: env.JS}
	js.deaf.Store(1)
	reg := prometheus.NewRegistry()
	startOn(t, js, st, Config{Streams: []string{bus.Telemetry}, Check: 50 * time.Millisecond, Registerer: reg})
	settled(t, env, "recorder", bus.Telemetry)
	if n := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); n != 50 {
		t.Errorf("%d rows, want 50", n)
	}
	if n := restartsOf(t, reg, bus.Telemetry, causeStalled); n != 1 {
		t.Errorf("%v restarts for a stalled read counted, want one", n)
	}
}

// TestARestartThatCannotReadWhereToResumeTriesAgain: the read stalls, and the restart finds the
// server unable to say where the stream stands three times (503, as while a cluster elects a
// leader). It tries again with backoff and records every event; before, the recorder stopped
// there, as it did in the soak's fault run ("JetStream system temporarily unavailable").
func TestARestartThatCannotReadWhereToResumeTriesAgain(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	publish(t, env, sweeps("n", 50, yesterday.Add(10*time.Hour)))
	js := &faultyBus{JetStream: env.JS}
	js.deaf.Store(1)
	js.failOnResume.Store(3)
	stop := startOn(t, js, st, Config{Streams: []string{bus.Telemetry}, Check: 50 * time.Millisecond,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	settled(t, env, "recorder", bus.Telemetry)
	if n := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); n != 50 {
		t.Errorf("%d rows, want 50", n)
	}
	if armed, left := js.failOnResume.Load(), js.streamFails.Load(); armed != 0 || left != 0 {
		t.Errorf("the restart met %d of the 3 failed reads (armed: %v)", 3-left, armed == 0)
	}
	if err := stop(); err != nil {
		t.Errorf("the recorder stopped with %v", err)
	}
}

// TestStalledNeedsPendingMessagesNobodyPullsAndRoom: a read is stalled only when the consumer
// holds messages, no pull request waits for them and it may still deliver; a consumer at its
// ack-pending limit (the store is refusing, nothing gets acked) is waiting, not stalled.
func TestStalledNeedsPendingMessagesNobodyPullsAndRoom(t *testing.T) {
	for _, c := range []struct {
		name                      string
		pending, waiting, ackPend uint64
		maxAckPending             int
		want                      bool
	}{
		{"a lost pull request", 488, 0, 0, 4000, true},
		{"a pull request waits", 488, 1, 0, 4000, false},
		{"nothing to deliver", 0, 0, 0, 4000, false},
		{"at the ack-pending limit", 488, 0, 4000, 4000, false},
		{"below the limit", 488, 0, 3999, 4000, true},
		{"no limit", 488, 0, 9000, -1, true},
	} {
		info := &jetstream.ConsumerInfo{NumPending: c.pending, NumWaiting: int(c.waiting), NumAckPending: int(c.ackPend),
			Config: jetstream.ConsumerConfig{MaxAckPending: c.maxAckPending}}
		if got := stalled(info); got != c.want {
			t.Errorf("%s: stalled = %v, want %v", c.name, got, c.want)
		}
	}
}
