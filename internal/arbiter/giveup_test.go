package arbiter_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// slowYAML is fleetYAML with zone a's launches taking an hour, and a two-minute launch timeout.
var slowYAML = strings.Replace(fleetYAML, "launch_delay: 30s}}", "launch_delay: 1h, launch_timeout: 2m}}", 1)

// A launch the actuator cannot place (no capacity) or that is not ready within its location's
// launch timeout is given up: its group is scaled back, launch_failed is announced, the replica is
// placed elsewhere, and nothing stays launching.
func TestLaunchThatCannotGetCapacityIsGivenUp(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		dead     string // the location whose launches never come
		setup    func(h *harness)
		waitFor  time.Duration // how long before the arbiter may give up
		zonesFor []string      // spot zones with prices, the dead one cheapest
	}{
		{name: "no capacity: pending", yaml: fleetYAML, dead: "a", setup: func(h *harness) { h.sim.SetCapacity("a", 0) },
			zonesFor: []string{"us-east-1a", "us-east-1b"}},
		{name: "not ready within the launch timeout", yaml: slowYAML, dead: "a", setup: func(*harness) {},
			waitFor: 2 * time.Minute, zonesFor: []string{"us-east-1a", "us-east-1b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, tt.yaml)
			tt.setup(h)
			failed := h.watchLaunchFailed(t)
			prices := map[string]float64{h.price("us-east-1a", events.OnDemand, 3.0): 3.0}
			for i, z := range tt.zonesFor {
				p := 1.0 + 0.1*float64(i)
				prices[h.price(z, events.Spot, p)] = p
			}
			r := h.start("a1", nil)
			eventually(t, "the arbiter leads", r.Leading)
			eventually(t, "the prices are folded", func() bool {
				for id, p := range prices {
					if !r.KnowsPrice(id, p) {
						return false
					}
				}
				return true
			})
			h.settle(ctx, r)
			if !slices.ContainsFunc(h.sim.Calls(), func(c actuate.Target) bool { return c.Location == tt.dead && c.Kind == "launch" }) {
				for _, c := range h.sim.Calls() {
					t.Logf("call %s %s %s n=%d %s", c.Kind, c.Reason, c.Group, c.Replicas, c.Offer)
				}
				t.Fatalf("the plan did not launch into %s, the cheapest zone; the test shows nothing", tt.dead)
			}
			h.clock.Advance(tt.waitFor)
			for range 4 {
				h.clock.Advance(31 * time.Second)
				h.settle(ctx, r)
			}
			if !slices.ContainsFunc(h.sim.Calls(), func(c actuate.Target) bool {
				return c.Location == tt.dead && c.Reason == arbiter.ReasonLaunchFailed
			}) {
				t.Errorf("no call gave up the launch at %s", tt.dead)
			}
			eventually(t, "launch_failed is announced", func() bool { return len(failed) > 0 })
			for _, rep := range r.Books()["svc"].Replicas {
				stuck := rep.State == placement.StateLaunching && h.clock.Now().Sub(rep.Since) >= 2*time.Minute
				if stuck || (tt.waitFor == 0 && rep.Location == tt.dead && rep.Market == events.Spot) {
					t.Errorf("replica %s is %s at %s since %v; want none stuck launching, none at %s if it has no capacity",
						rep.ID, rep.State, rep.Location, rep.Since, tt.dead)
				}
			}
			if n := ready(h); n != 2 {
				t.Errorf("%d replicas ready, want 2: the given-up launch was not placed elsewhere", n)
			}
		})
	}
}

// watchLaunchFailed collects the action.updated events that give a launch up.
func (h *harness) watchLaunchFailed(t *testing.T) chan *events.ActionUpdated {
	t.Helper()
	return h.watchActions(t, 16, func(e *events.ActionUpdated) bool { return e.Reason == arbiter.ReasonLaunchFailed })
}

// watchActions collects the action.updated events that keep says to, up to n.
func (h *harness) watchActions(t *testing.T, n int, keep func(*events.ActionUpdated) bool) chan *events.ActionUpdated {
	t.Helper()
	out := make(chan *events.ActionUpdated, n)
	sub, err := h.env.Conn.Subscribe("bursar.action.>", func(m *nats.Msg) {
		var e events.ActionUpdated
		if json.Unmarshal(m.Data, &e) == nil && keep(&e) {
			out <- &e
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := h.env.Conn.Flush(); err != nil { // the server holds the subscription before the arbiter acts
		t.Fatal(err)
	}
	return out
}

// An arbiter killed after its plan was applied comes back to an actuator that holds nothing (a
// sim fleet lives in the process): the groups the actuator does not report are taken as empty,
// the books follow, and the next plan launches again instead of counting replicas that are gone.
func TestActuatorTruthWinsAfterARestart(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	r := place(ctx, t, h, func() *running { return h.start("a1", nil) })
	r.Kill()
	h.sim = sim.New(h.cfg, h.clock.Now) // what the restarted process finds: nothing runs
	r2 := h.start("a2", nil)
	eventually(t, "the new arbiter leads", r2.Leading)
	h.settle(ctx, r2)
	h.clock.Advance(31 * time.Second)
	h.settle(ctx, r2)
	if n := ready(h); n != 2 {
		t.Errorf("%d replicas ready after the restart, want 2", n)
	}
	for _, rep := range r2.Books()["svc"].Replicas {
		if rep.State != placement.StateReady {
			t.Errorf("replica %s is %s in the books, want every one ready as the actuator says", rep.ID, rep.State)
		}
	}
}
