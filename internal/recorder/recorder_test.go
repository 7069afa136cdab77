package recorder

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// yesterday is yesterday's midnight UTC: the samples the tests record at fixed hours of it fall
// inside the telemetry TTL (30 days) whatever day the suite runs (see also recent).
var yesterday = time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour)

func testCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func publish(t testing.TB, env *bustest.Env, evs []events.Event) {
	t.Helper()
	p := bus.NewPublisher(env.JS)
	for i, e := range evs {
		// Wait for the acks of every thousand: on a loaded machine a publisher with thousands
		// outstanding stalls past nats.go's wait and gives up ("too many outstanding").
		if i > 0 && i%1000 == 0 {
			if err := p.Flush(testCtx(t)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.PublishAsync(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// start runs a recorder until the returned stop is called; stop returns Run's error.
func start(t testing.TB, env *bustest.Env, st Store, cfg Config) (stop func() error) {
	t.Helper()
	return startOn(t, env.JS, st, cfg)
}

// startOn is start on js, the bus or a faulty one.
func startOn(t testing.TB, js JetStream, st Store, cfg Config) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(js, st, cfg).Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// settled waits until every recorder consumer has acked everything in its stream.
func settled(t testing.TB, env *bustest.Env, durable string, streams ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	if len(streams) == 0 {
		streams = []string{bus.Market, bus.Telemetry, bus.Fleet}
	}
	for _, stream := range streams {
		for {
			ci, err := env.JS.Consumer(testCtx(t), stream, durable+"-"+strings.ToLower(stream))
			if err == nil {
				info, err := ci.Info(testCtx(t))
				si, serr := env.JS.Stream(testCtx(t), stream)
				if err == nil && serr == nil && info.NumPending == 0 && info.NumAckPending == 0 &&
					info.AckFloor.Stream == si.CachedInfo().State.LastSeq {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("recorder did not ack all of %s in time", stream)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func queryInt(t testing.TB, st *store.Store, q string) int64 {
	t.Helper()
	out, err := st.Query(testCtx(t), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var v struct{ N int64 }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s: %q: %v", q, out, err)
	}
	return v.N
}

// truncated is e as stored: times to the millisecond.
func truncated(e events.Event) events.Event {
	c := events.New(e.EventType())
	b, _ := json.Marshal(e)
	_ = json.Unmarshal(b, c)
	ms := func(t *time.Time) { *t = t.Truncate(time.Millisecond) }
	ms(&c.Header().At)
	switch c := c.(type) {
	case *events.CapacityReclaimed:
		ms(&c.NoticeAt)
		ms(&c.Deadline)
	case *events.BudgetAlert:
		ms(&c.PeriodStart)
	case *events.CostAnomaly:
		ms(&c.Start)
	case *events.JobProgress:
		if c.CheckpointAt != nil {
			ms(c.CheckpointAt)
		}
	case *events.JobState:
		ms(&c.Deadline)
		if c.FinishedAt != nil {
			ms(c.FinishedAt)
		}
	}
	return c
}

func TestEveryEventTypeRoundTrips(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	at := yesterday.Add(6*time.Hour + 123456789)
	var evs []events.Event
	for i := range 3 {
		evs = append(evs, eventstest.Samples(at.Add(time.Duration(i)*time.Second), i)...)
	}
	publish(t, env, evs)
	start(t, env, st, Config{})
	settled(t, env, "recorder")

	want := map[string]events.Event{}
	for _, e := range evs {
		want[e.Header().ID] = truncated(e)
	}
	for _, typ := range events.Types {
		tbl := tables[typ].name
		// Each row formatted as JSON in the query itself, where its SETTINGS apply (Query wraps the
		// query in a read-only SELECT that formats what it returns).
		out, err := st.Query(testCtx(t), "SELECT formatRowNoNewline('JSONEachRow', * EXCEPT (recorded_at)) AS row FROM "+
			st.Table(tbl)+" FINAL ORDER BY id SETTINGS date_time_output_format = 'iso'")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s has %d rows, want 3", tbl, len(lines))
		}
		for _, line := range lines {
			var row struct{ Row string }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %v: %s", tbl, err, line)
			}
			got := events.New(typ)
			if err := json.Unmarshal([]byte(row.Row), got); err != nil {
				t.Fatalf("%s: %v: %s", tbl, err, line)
			}
			got.Header().Type = typ
			if w := want[got.Header().ID]; !reflect.DeepEqual(got, w) {
				t.Errorf("%s row differs from the event:\n got  %+v\n want %+v", tbl, got, w)
			}
		}
	}
}

func TestRestartAfterCrashStoresEachEventOnce(t *testing.T) {
	tests := []struct {
		name       string
		crashAfter int // tables committed before the crash; -1: all, before the ack
	}{
		{"redelivered batch (crash before the ack)", -1},
		{"killed mid-batch (after the first table)", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, st := bustest.Start(t), storetest.New(t)
			at := yesterday.Add(10 * time.Hour)
			var evs []events.Event
			for i := range 10 {
				evs = append(evs, eventstest.Samples(at.Add(time.Duration(i)*time.Minute), i)...)
			}
			evs = append(evs, fleetAndTokens()...)
			publish(t, env, evs)

			cfg := Config{AckWait: 300 * time.Millisecond}
			stop := start(t, env, newCrashing(st, tc.crashAfter), cfg)
			waitRows(t, st, func(n int64) bool { return n > 0 })
			time.Sleep(200 * time.Millisecond)
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			before := queryInt(t, st, "SELECT count() AS n FROM "+st.Table("gpu_sample"))

			start(t, env, st, cfg)
			settled(t, env, "recorder")

			perType := map[events.Type]int64{}
			for _, e := range evs {
				perType[e.EventType()]++
			}
			for typ, want := range perType {
				tbl := st.Table(tables[typ].name)
				q := fmt.Sprintf("SELECT count() AS n FROM %s", tbl)
				if got := queryInt(t, st, q); got != want {
					t.Errorf("%s has %d rows after the restart, want %d (one per event)", tbl, got, want)
				}
				q = fmt.Sprintf("SELECT uniqExact(id) AS n FROM %s", tbl)
				if got := queryInt(t, st, q); got != want {
					t.Errorf("%s has %d distinct events, want %d", tbl, got, want)
				}
			}
			if tc.crashAfter == -1 && before == 0 {
				t.Error("the first run inserted nothing: the redelivery was not exercised")
			}
			checkRollupsMatchRaw(t, st)
		})
	}
}

// waitRows waits until the total rows of the event tables satisfy ok.
func waitRows(t testing.TB, st *store.Store, ok func(int64) bool) {
	t.Helper()
	var parts []string
	for _, tbl := range tables {
		parts = append(parts, "(SELECT count() FROM "+st.Table(tbl.name)+")")
	}
	q := "SELECT " + strings.Join(parts, " + ") + " AS n"
	deadline := time.Now().Add(30 * time.Second)
	for !ok(queryInt(t, st, q)) {
		if time.Now().After(deadline) {
			t.Fatal("rows did not arrive in time")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
