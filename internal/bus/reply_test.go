package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// quiet is how long a stream must stay as it was after an attack's answer could have reached
// it: the server stores such an answer within milliseconds.
const quiet = time.Second

// staysAt fails t if stream holds other than want messages at any time within quiet.
func staysAt(t *testing.T, env *bustest.Env, stream string, want uint64) {
	t.Helper()
	for end := time.Now().Add(quiet); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if got := streamMsgs(t, env, stream); got != want {
			t.Fatalf("stream %s holds %d messages, want %d: the server wrote a reply into it", stream, got, want)
		}
	}
}

// TestReplySubjectsCannotWriteStreams: NATS checks permissions on a message's subject, never on
// its reply subject, so a role that may publish into a stream or ask JetStream anything could
// have the server store its answer in the leader lease, a budget or a placement book. Each
// attack is sent with the role's real key; the role then asks the same thing properly (its
// answer is the sign the attack's answer was sent), and the target stays empty.
func TestReplySubjectsCannotWriteStreams(t *testing.T) {
	env := bustest.Start(t)
	for _, tt := range []struct {
		name, role, subject, reply, stream string
	}{
		{"report's API request into the lease", bus.RoleReport, "$JS.API.INFO", "$KV.bursar_leases.arbiter", "KV_" + bus.BucketLeases},
		{"report's stream info into the audit log", bus.RoleReport, "$JS.API.STREAM.INFO.MARKET", "bursar.fleet.aws-use1", bus.Fleet},
		{"collector's price into a budget", bus.RoleCollector, "bursar.price.aws.us-east-1", "$KV.bursar_budgets.cap", "KV_" + bus.BucketBudgets},
		{"collector's price into a book", bus.RoleCollector, "bursar.price.aws.us-east-1", "$KV.bursar_placement.workload.chat", "KV_" + bus.BucketPlacement},
		{"collector's stream info into the lease", bus.RoleCollector, "$JS.API.STREAM.INFO.MARKET", "$KV.bursar_leases.collector", "KV_" + bus.BucketLeases},
		{"budget's API request into a budget", bus.RoleBudget, "$JS.API.INFO", "$KV.bursar_budgets.cap", "KV_" + bus.BucketBudgets},
		{"budget's bucket read into the jobs", bus.RoleBudget, "$JS.API.STREAM.INFO.KV_bursar_budgets", "$KV.bursar_jobs.job.x", "KV_" + bus.BucketJobs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := streamMsgs(t, env, tt.stream)
			nc, _ := env.ConnectAs(t, tt.role)
			if err := nc.PublishRequest(tt.subject, tt.reply, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := nc.Request(tt.subject, []byte(`{}`), 5*time.Second); err != nil {
				t.Fatalf("%s may not ask %s: %v", tt.role, tt.subject, err)
			}
			staysAt(t, env, tt.stream, before)
		})
	}
}

// TestReadRolesCreateNoConsumers: a consumer pushes to a subject its creator names, a bucket's
// among them, and a durable one on a bucket would outlive the reader. Report and budget may
// create none, durable, ephemeral or pushing into the lease, on any stream.
func TestReadRolesCreateNoConsumers(t *testing.T) {
	env := bustest.Start(t)
	for _, role := range []string{bus.RoleReport, bus.RoleBudget} {
		for _, stream := range []string{"KV_" + bus.BucketBudgets, bus.Market} {
			for _, cfg := range []jetstream.ConsumerConfig{
				{Durable: "reader"},
				{DeliverSubject: "$KV.bursar_leases.arbiter"},
			} {
				t.Run(role+"/"+stream+"/"+cfg.Durable+cfg.DeliverSubject, func(t *testing.T) {
					nc, _ := env.ConnectAs(t, role)
					js, err := jetstream.New(nc) // the raw client, not the role's ReadOnly
					if err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					if _, err := js.CreateOrUpdateConsumer(ctx, stream, cfg); err == nil {
						t.Fatalf("%s created a consumer on %s", role, stream)
					}
					if n := consumers(t, env, stream); n != 0 {
						t.Fatalf("%s has %d consumers, want 0", stream, n)
					}
					if cfg.DeliverSubject != "" {
						staysAt(t, env, "KV_"+bus.BucketLeases, 0)
					}
				})
			}
		}
	}
}

func consumers(t *testing.T, env *bustest.Env, stream string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := env.JS.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.Consumers
}

// TestReadOnlyReadsBuckets: the budget role reads histories, listings and watches of a bucket
// with its ReadOnly JetStream, as "arbiter budget history|list" and "arbiter job status" do.
func TestReadOnlyReadsBuckets(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := env.JS.KeyValue(ctx, bus.BucketBudgets)
	if err != nil {
		t.Fatal(err)
	}
	for _, put := range []struct{ key, value string }{{"a", "1"}, {"b", "1"}, {"a", "2"}, {"c", "1"}} {
		if _, err := kv.Put(ctx, put.key, []byte(put.value)); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	_, js := env.ConnectAs(t, bus.RoleBudget)
	rkv, err := js.KeyValue(ctx, bus.BucketBudgets)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := rkv.History(ctx, "a")
	if err != nil || len(hist) != 2 || string(hist[0].Value()) != "1" || string(hist[1].Value()) != "2" {
		t.Fatalf("history of a: %v, %v; want 1 then 2", values(hist), err)
	}
	if _, err := rkv.History(ctx, "nope"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("history of a missing key: %v, want ErrKeyNotFound", err)
	}
	keys, err := rkv.Keys(ctx)
	if err != nil || len(keys) != 2 || keys[0] != "b" || keys[1] != "a" {
		t.Fatalf("keys %v, %v; want [b a] (c deleted)", keys, err)
	}
	w, err := rkv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop() //nolint:errcheck // a test's watcher
	var got []string
	for e := range w.Updates() {
		if e == nil {
			break
		}
		got = append(got, e.Key()+"="+string(e.Value()))
	}
	if len(got) != 2 || got[0] != "b=1" || got[1] != "a=2" {
		t.Fatalf("watch's current values %v, want [b=1 a=2]", got)
	}
	if _, err := kv.Put(ctx, "d", []byte("1")); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.Updates():
		if e == nil || e.Key() != "d" || e.Operation() != jetstream.KeyValuePut {
			t.Fatalf("watch's next update %v, want d", e)
		}
	case <-ctx.Done():
		t.Fatal("the watch did not see a later put")
	}
	if n := consumers(t, env, "KV_"+bus.BucketBudgets); n != 0 {
		t.Fatalf("the reads left %d consumers", n)
	}
}

func values(es []jetstream.KeyValueEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Value()))
	}
	return out
}
