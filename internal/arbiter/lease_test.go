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
