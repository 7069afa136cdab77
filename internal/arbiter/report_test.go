package arbiter_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// TestAnEmptyGroupIsPublishedWhenItEmpties: a group the actuator reports but that runs nothing
// (a Deployment scaled to zero) is published at its first report and then every 15 minutes, not
// at every report; a group that runs something is published at every report.
func TestAnEmptyGroupIsPublishedWhenItEmpties(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	offer := h.price("us-east-1b", events.OnDemand, 3.5)
	w := &withEmpty{Fleet: h.sim, empty: actuate.Observed{
		Group: actuate.Group{Workload: "svc", Location: "b", Market: "on_demand"}, Offer: offer}}
	r := place(ctx, t, h, func() *running {
		return h.start("a1", func(o *arbiter.Options) { o.Actuator = actuate.Router{"a": w, "b": w} })
	})
	obs, err := h.sim.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(obs, func(o actuate.Observed) bool { return o.Ready > 0 })
	if i < 0 {
		t.Fatal("the sim runs nothing ready")
	}
	running := obs[i].Group
	// The empty group is reported first, so once a report's state of the running group is in the
	// stream, so is anything that report published of the empty one.
	var n map[actuate.Group]int
	waitFor := func(wantRunning int) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d states of %s", wantRunning, running), func() bool {
			n = statesByGroup(ctx, t, h)
			return n[running] >= wantRunning
		})
	}
	waitFor(1)
	if n[w.empty.Group] != 1 {
		t.Fatalf("place's reports (within a minute) published the empty group %d times, want once", n[w.empty.Group])
	}
	before := n[running]
	for k := range 3 { // a state is its group's at a time: reports at one time publish it once
		h.clock.Advance(time.Minute)
		r.Report(ctx)
		waitFor(before + k + 1)
	}
	if n[w.empty.Group] != 1 {
		t.Errorf("three reports a minute apart published the empty group %d times in all, want once", n[w.empty.Group])
	}
	h.clock.Advance(15 * time.Minute)
	r.Report(ctx)
	waitFor(before + 4)
	if n[w.empty.Group] != 2 {
		t.Errorf("a report 15 minutes later: the empty group published %d times in all, want twice", n[w.empty.Group])
	}
}

// withEmpty reports the sim's groups and, first, one empty group the sim does not run.
type withEmpty struct {
	*sim.Fleet
	empty actuate.Observed
}

func (w *withEmpty) Observe(ctx context.Context) ([]actuate.Observed, error) {
	obs, err := w.Fleet.Observe(ctx)
	return append([]actuate.Observed{w.empty}, obs...), err
}

// statesByGroup counts the replica.state events in the FLEET stream by group.
func statesByGroup(ctx context.Context, t *testing.T, h *harness) map[actuate.Group]int {
	t.Helper()
	n := map[actuate.Group]int{}
	for _, rs := range replicaStates(ctx, t, h) {
		n[actuate.Group{Workload: rs.Workload, Location: rs.Location, Market: rs.Market}]++
	}
	return n
}

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

// latestInstances returns the instances of the latest replica.state of each workload and offer.
func latestInstances(ctx context.Context, t *testing.T, h *harness) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for _, rs := range replicaStates(ctx, t, h) {
		got[rs.Workload+" "+rs.Offer] = rs.Instances
	}
	return got
}

// replicaStates reads the FLEET stream's replica.state events, oldest first.
func replicaStates(ctx context.Context, t *testing.T, h *harness) []*events.ReplicaState {
	t.Helper()
	cons, err := h.env.JS.OrderedConsumer(ctx, bus.Fleet, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.fleet.>"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*events.ReplicaState
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
				out = append(out, rs)
			}
		}
		if n == 0 {
			return out
		}
		time.Sleep(time.Millisecond)
	}
}
