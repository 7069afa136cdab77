package bus_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// sample is the sample event of type t.
func sample(t *testing.T, typ events.Type) events.Event {
	t.Helper()
	for _, e := range eventstest.Samples(at, 7) {
		if e.EventType() == typ {
			return e
		}
	}
	t.Fatalf("no sample of %s", typ)
	return nil
}

// streamMsgs is how many messages stream holds, read as the arbiter.
func streamMsgs(t *testing.T, env *bustest.Env, stream string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := env.JS.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func TestAnonymousConnectionIsRefused(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc, _, err := bus.Connect(ctx, env.Server.ClientURL(), "anonymous", slog.New(slog.DiscardHandler))
	if err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to the embedded server")
	}
}

// TestRolesMayOnlyDoTheirJob publishes every event type and writes every bucket as each
// non-arbiter role: only what the role exists for is stored, everything else is refused and
// leaves the stream as it was.
func TestRolesMayOnlyDoTheirJob(t *testing.T) {
	env := bustest.Start(t)
	allowed := map[string][]events.Type{
		bus.RoleCollector: {events.TypePriceObserved, events.TypeCapacityReclaimed, events.TypeGPUSample, events.TypeTokensSample,
			events.TypeJobProgress},
		bus.RoleReport: nil,
		bus.RoleBudget: nil,
	}
	for role, ok := range allowed {
		_, js := env.ConnectAs(t, role)
		pub := bus.NewPublisher(js)
		for _, e := range eventstest.Samples(at, len(role)) {
			t.Run(role+"/"+string(e.EventType()), func(t *testing.T) {
				stream := streamOf(e)
				before := streamMsgs(t, env, stream)
				want := contains(ok, e.EventType())
				ctx, cancel := context.WithTimeout(context.Background(), wait(want))
				defer cancel()
				err := pub.Publish(ctx, e)
				if want && err != nil {
					t.Fatalf("%s may publish %s: %v", role, e.EventType(), err)
				}
				if !want && err == nil {
					t.Fatalf("%s published %s", role, e.EventType())
				}
				if got, w := streamMsgs(t, env, stream), before+boolInt(want); got != w {
					t.Fatalf("%s: stream %s holds %d messages, want %d", role, stream, got, w)
				}
			})
		}
	}
}

// TestOnlyArbiterWritesBudgets: budget commands ask the arbiter (budget.Admin), which records
// the NATS identity as the actor; the budget role writing the bucket itself is refused.
func TestOnlyArbiterWritesBudgets(t *testing.T) {
	env := bustest.Start(t)
	for _, tt := range []struct {
		role, bucket string
		want         bool
	}{
		{bus.RoleBudget, bus.BucketBudgets, false},
		{bus.RoleArbiter, bus.BucketBudgets, true},
		{bus.RoleBudget, bus.BucketPlacement, false},
		{bus.RoleCollector, bus.BucketBudgets, false},
		{bus.RoleCollector, bus.BucketPlacement, false},
		{bus.RoleReport, bus.BucketBudgets, false},
		{bus.RoleReport, bus.BucketPlacement, false},
	} {
		t.Run(tt.role+"/"+tt.bucket, func(t *testing.T) {
			_, js := env.ConnectAs(t, tt.role)
			ctx, cancel := context.WithTimeout(context.Background(), wait(tt.want))
			defer cancel()
			err := putKey(ctx, js, tt.bucket)
			if tt.want && err != nil {
				t.Fatalf("%s may write %s: %v", tt.role, tt.bucket, err)
			}
			if !tt.want && err == nil {
				t.Fatalf("%s wrote %s", tt.role, tt.bucket)
			}
			kv, err := env.JS.KeyValue(context.Background(), tt.bucket)
			if err != nil {
				t.Fatal(err)
			}
			_, err = kv.Get(context.Background(), "forged")
			if stored := err == nil; stored != tt.want {
				t.Fatalf("key stored: %v, want %v", stored, tt.want)
			}
			if stored := err == nil; stored {
				if err := kv.Purge(context.Background(), "forged"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// putKey writes a key the way budget.Store does, binding the bucket first.
func putKey(ctx context.Context, js jetstream.JetStream, bucket string) error {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, "forged", []byte(`{"limit":1e9}`))
	return err
}

func TestReportReadsStreamsAndBudgets(t *testing.T) {
	env := bustest.Start(t)
	if _, err := env.JS.KeyValue(context.Background(), bus.BucketBudgets); err != nil {
		t.Fatal(err)
	}
	kv, _ := env.JS.KeyValue(context.Background(), bus.BucketBudgets)
	if _, err := kv.Put(context.Background(), "p", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	_, js := env.ConnectAs(t, bus.RoleReport)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, cfg := range bus.Streams(bus.Options{}) {
		if _, err := js.Stream(ctx, cfg.Name); err != nil {
			t.Errorf("report cannot read stream %s: %v", cfg.Name, err)
		}
	}
	rkv, err := js.KeyValue(ctx, bus.BucketBudgets)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := rkv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range keys.Keys() {
		got = append(got, k)
	}
	if len(got) != 1 || got[0] != "p" {
		t.Fatalf("report listed budget keys %v, want [p]", got)
	}
	gctx, gcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer gcancel()
	if _, err := rkv.Get(gctx, "p"); err != nil {
		t.Fatalf("report cannot get a budget: %v", err)
	}
}

func streamOf(e events.Event) string {
	for _, cfg := range bus.Streams(bus.Options{}) {
		for _, s := range cfg.Subjects {
			if matches(s, e.Subject()) {
				return cfg.Name
			}
		}
	}
	return ""
}

// matches reports whether subject falls under a "prefix.>" stream subject.
func matches(pattern, subject string) bool {
	prefix := pattern[:len(pattern)-1]
	return len(subject) > len(prefix) && subject[:len(prefix)] == prefix
}

func contains(ts []events.Type, t events.Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// wait is how long a request may take: a refused one never gets an answer, so it waits less.
func wait(allowed bool) time.Duration {
	if allowed {
		return 10 * time.Second
	}
	return 500 * time.Millisecond
}

// TestOnlyReportAndArbiterAskTheQueryService: report's key reaches the query service, the
// collector's and budget's keys can neither ask it nor answer in its place.
func TestOnlyReportAndArbiterAskTheQueryService(t *testing.T) {
	env := bustest.Start(t)
	const subject = "bursar.query.store"
	sub, err := env.Conn.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond([]byte("ok")) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // the test ends
	// The server holds the responder before the others ask.
	if err := env.Conn.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		role string
		want bool
	}{{bus.RoleReport, true}, {bus.RoleArbiter, true}, {bus.RoleCollector, false}, {bus.RoleBudget, false}} {
		t.Run(tt.role, func(t *testing.T) {
			nc, _ := env.ConnectAs(t, tt.role)
			_, err := nc.Request(subject, []byte(`{}`), wait(tt.want))
			if (err == nil) != tt.want {
				t.Fatalf("request as %s: err = %v, want allowed %v", tt.role, err, tt.want)
			}
			if tt.role == bus.RoleArbiter {
				return
			}
			fake, err := nc.SubscribeSync(subject)
			if err != nil {
				return // refused at once
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := env.Conn.Publish(subject, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := fake.NextMsg(wait(false)); err == nil {
				t.Fatalf("%s received a query meant for the query service", tt.role)
			}
		})
	}
}
