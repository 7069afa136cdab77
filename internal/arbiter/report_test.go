package arbiter_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// TestReplicaStateNamesTheInstances: the replica.state the arbiter publishes carries the
// instances the actuator observed, so a bill can be matched to the workload by resource id
// (docs/billing.md).
func TestReplicaStateNamesTheInstances(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	r := place(ctx, t, h, func() *running { return h.start("a1", nil) })
	r.Report(ctx)
	obs, err := h.sim.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, o := range obs {
		if o.Ready > 0 {
			want[o.Workload+" "+o.Offer] = o.Instances
		}
	}
	if len(want) == 0 {
		t.Fatal("the sim runs nothing ready")
	}
	var got map[string][]string
	deadline := time.Now().Add(10 * time.Second) // replica.state is published asynchronously
	same := func() bool {
		for k, w := range want {
			if !slices.Equal(got[k], w) {
				return false
			}
		}
		return true
	}
	for got = latestInstances(ctx, t, h); !same() && time.Now().Before(deadline); got = latestInstances(ctx, t, h) {
		time.Sleep(10 * time.Millisecond)
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: the latest replica.state names instances %q, the actuator %q", k, got[k], w)
		}
	}
}

// latestInstances reads the FLEET stream's replica.state events and returns the instances of the
// latest of each workload and offer.
func latestInstances(ctx context.Context, t *testing.T, h *harness) map[string][]string {
	t.Helper()
	cons, err := h.env.JS.OrderedConsumer(ctx, bus.Fleet, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.fleet.>"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for {
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			e, err := events.Decode(m.Data())
			if rs, ok := e.(*events.ReplicaState); err == nil && ok {
				got[rs.Workload+" "+rs.Offer] = rs.Instances
			}
		}
		if n == 0 {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}
