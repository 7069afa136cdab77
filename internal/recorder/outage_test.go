package recorder

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// outage is the real store behind a switch that makes inserts fail as if ClickHouse were down.
type outage struct {
	*store.Store
	down     atomic.Bool
	failures atomic.Int64
}

func (o *outage) Insert(ctx context.Context, table, columns, token string, rows []byte) error {
	if o.down.Load() {
		o.failures.Add(1)
		return errors.Join(store.ErrUnavailable, errors.New("dial tcp 127.0.0.1:9000: connection refused"))
	}
	return o.Store.Insert(ctx, table, columns, token, rows)
}

func TestClickHouseOutageHoldsAcksAndLosesNothing(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	o := &outage{Store: st}
	o.down.Store(true)
	var logs testkit.Log
	reg := prometheus.NewRegistry()
	cfg := Config{Streams: []string{"TELEMETRY"}, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		Registerer: reg, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	at := yesterday.Add(6 * time.Hour)
	var evs []events.Event
	for i := range 20 {
		for _, e := range eventstest.Samples(at.Add(time.Duration(i)*time.Second), i) {
			if e.EventType() == events.TypeGPUSample {
				evs = append(evs, e)
			}
		}
	}
	publish(t, env, evs)
	start(t, env, o, cfg)

	deadline := time.Now().Add(30 * time.Second)
	for o.failures.Load() < 10 {
		if time.Now().After(deadline) {
			t.Fatal("the recorder did not retry")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cons, err := env.JS.Consumer(testCtx(t), "TELEMETRY", "recorder-telemetry")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != 0 {
		t.Fatalf("acked up to %d while ClickHouse was down", info.AckFloor.Stream)
	}
	if lag := lagOf(t, reg); lag != float64(len(evs)) {
		t.Errorf("lag = %v while down, want %d", lag, len(evs))
	}

	o.down.Store(false)
	settled(t, env, "recorder", "TELEMETRY")
	if got := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample")); got != int64(len(evs)) {
		t.Errorf("gpu_sample has %d rows after the outage, want %d", got, len(evs))
	}
	if lag := lagOf(t, reg); lag != 0 {
		t.Errorf("lag = %v after recovery, want 0", lag)
	}
	out := logs.String()
	if n := strings.Count(out, "failing; holding acks"); n != 1 {
		t.Errorf("logged the outage %d times over %d failures, want once:\n%s", n, o.failures.Load(), out)
	}
	if n := strings.Count(out, "recovered"); n != 1 {
		t.Errorf("logged the recovery %d times, want once:\n%s", n, out)
	}
}

func lagOf(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, "bursar_recorder_lag_messages")
	if err != nil || n != 1 {
		t.Fatalf("lag series: %d, %v", n, err)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "bursar_recorder_lag_messages" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
