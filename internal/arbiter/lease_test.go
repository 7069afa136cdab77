package arbiter

import (
	"context"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// A holder that stops renewing (cut off, or stuck) must stop acting while its key still exists,
// so that a successor can never act at the same time; after the key expires a standby gets it.
func TestDeposedLeaderStopsBeforeItsLeaseEnds(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	const ttl = 2 * time.Second
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: ttl}); err != nil {
		t.Fatal(err)
	}
	kv, err := env.JS.KeyValue(ctx, bus.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	leader, standby := newLease(kv, "p", "leader", ttl), newLease(kv, "p", "standby", ttl)
	if !leader.tick(ctx) {
		t.Fatal("the first arbiter did not get the lease")
	}
	if standby.tick(ctx) {
		t.Fatal("two arbiters hold the lease")
	}
	if !leader.tick(ctx) {
		t.Fatal("the holder could not renew")
	}
	// The leader stops renewing. Poll until it considers itself deposed.
	for {
		if _, ok := leader.valid(); !ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if h := holderOf(ctx, kv, "p"); h != "leader" {
		t.Fatalf("the leader stopped acting only after its key was gone (holder now %q)", h)
	}
	if standby.tick(ctx) {
		t.Fatal("the standby took over while the old lease still stood")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !standby.tick(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("the standby never took over after the lease expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if leader.tick(ctx) {
		t.Error("the old leader renewed a lease someone else holds")
	}
}

// A lease key holding something no arbiter writes (a server's reply stored through a reply
// subject) is taken over by a standby once the value has stood a whole TTL, however long the
// bucket keeps it; a lease of another holder is never taken. Before, nobody led until the value
// expired from the bucket.
func TestForeignLeaseValueIsTakenOverAfterATTL(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: time.Hour}); err != nil { // the bucket keeps values long
		t.Fatal(err)
	}
	kv, err := env.JS.KeyValue(ctx, bus.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	var reported []Corruption
	standby := newLease(kv, "p", "standby", ttl)
	standby.onCorrupt = func(c Corruption) { reported = append(reported, c) }

	if _, err := kv.Put(ctx, "p", []byte("other-42")); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 3*ttl; time.Sleep(20 * time.Millisecond) {
		if standby.tick(ctx) {
			t.Fatal("a standby took over another arbiter's lease")
		}
	}

	if _, err := kv.Put(ctx, "p", []byte(`{"type":"io.nats.jetstream.api.v1.account_info_response"}`)); err != nil {
		t.Fatal(err)
	}
	if standby.tick(ctx) {
		t.Fatal("a standby took over a foreign value at once: the holder it replaced may still act")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !standby.tick(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("the standby never took over the foreign value")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if h := holderOf(ctx, kv, "p"); h != "standby" {
		t.Errorf("holder %q after the take-over, want standby", h)
	}
	if len(reported) != 1 || reported[0].Key != "p" || reported[0].Bucket != bus.BucketLeases {
		t.Errorf("reports %+v, want one naming the key", reported)
	}
}

func TestIsHolder(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"host-1234", true}, {"arb", true}, {"", false}, {"{\"stream\":\"KV_bursar_leases\",\"seq\":3}", false},
		{"[1]", false}, {"\"quoted\"", false}, {"two words", false}, {"tab\there", false}, {"\xff\xfe", false},
		{string(make([]byte, maxIdentity+1)), false},
	} {
		if got := isHolder([]byte(tc.v)); got != tc.want {
			t.Errorf("isHolder(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func FuzzIsHolder(f *testing.F) {
	f.Add("host-1")
	f.Add(`{"type":"x"}`)
	f.Fuzz(func(t *testing.T, v string) {
		if isHolder([]byte(v)) && checkIdentity(v) != nil {
			t.Fatalf("%q is a holder but not an identity", v)
		}
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') && isHolder([]byte(v)) {
			t.Fatalf("JSON-like %q taken for a holder", v)
		}
	})
}
