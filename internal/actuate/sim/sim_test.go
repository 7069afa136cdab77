package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

const fleetYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim, launch_delay: 1m}}
workloads:
  - {name: svc, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 1}}
`

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func setup(t *testing.T) (*sim.Fleet, *clock) {
	t.Helper()
	cfg, err := fleet.Parse([]byte(fleetYAML), "sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return sim.New(cfg, c.Now), c
}

var spot = actuate.Group{Workload: "svc", Location: "a", Market: events.Spot}

func observe(t *testing.T, f *sim.Fleet) actuate.Observed {
	t.Helper()
	obs, err := f.Observe(context.Background())
	if err != nil || len(obs) != 1 {
		t.Fatalf("Observe = %+v, %v", obs, err)
	}
	return obs[0]
}

func TestLaunchDelayAndReclaimLikeAReplicaSet(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	if err := f.Scale(ctx, actuate.Target{ActionID: "1", Group: spot, Replicas: 2}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name      string
		advance   time.Duration
		reclaim   bool
		wantReady int
	}{
		{"launching", 30 * time.Second, false, 0},
		{"ready after the launch delay", 30 * time.Second, false, 2},
		{"a reclaimed instance still serves until its deadline", 0, true, 2},
		{"gone at the deadline, and a new one launches", 2 * time.Minute, false, 1},
		{"the new one is ready a delay later", time.Minute, false, 2},
	}
	for _, s := range steps {
		c.now = c.now.Add(s.advance)
		if s.reclaim {
			e, ok := f.Reclaim("a", 2*time.Minute)
			if !ok || e.Location != "a" || e.Provider != "aws" || e.Zone != "us-east-1a" || !e.Deadline.Equal(c.now.Add(2*time.Minute)) {
				t.Fatalf("%s: Reclaim = %+v, %v", s.name, e, ok)
			}
		}
		if o := observe(t, f); o.Ready != s.wantReady || o.Desired != 2 {
			t.Errorf("%s: ready %d desired %d, want ready %d desired 2", s.name, o.Ready, o.Desired, s.wantReady)
		}
	}
	if n := len(f.Lives()); n != 3 {
		t.Errorf("%d instances lived, want 3", n)
	}
}

func TestScaleDownRemovesUnreadyFirstAndFailNextFails(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	_ = f.Scale(ctx, actuate.Target{Group: spot, Replicas: 1})
	c.now = c.now.Add(time.Minute)
	_ = f.Scale(ctx, actuate.Target{Group: spot, Replicas: 2})
	_ = f.Scale(ctx, actuate.Target{Group: spot, Replicas: 1})
	if o := observe(t, f); o.Ready != 1 || o.Desired != 1 {
		t.Errorf("after scaling down: %+v, want the ready instance kept", o)
	}
	f.FailNext = errors.New("api down")
	if err := f.Scale(ctx, actuate.Target{Group: spot, Replicas: 5}); err == nil {
		t.Error("FailNext did not fail the call")
	}
	if n, _ := f.Desired(ctx, spot); n != 1 {
		t.Errorf("a failed call changed desired to %d", n)
	}
	if err := f.Scale(ctx, actuate.Target{Group: actuate.Group{Workload: "svc", Location: "nowhere"}}); !errors.Is(err, actuate.ErrNotFound) {
		t.Errorf("unknown location: err = %v, want ErrNotFound", err)
	}
}

func TestTraceFiresReclaimsWhenDue(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	_ = f.Scale(ctx, actuate.Target{Group: spot, Replicas: 1})
	c.now = c.now.Add(time.Minute)
	f.Play([]sim.Reclaim{{At: c.now.Add(10 * time.Second), Location: "a", Notice: time.Minute}})
	if got := f.Due(); len(got) != 0 {
		t.Fatalf("fired early: %+v", got)
	}
	c.now = c.now.Add(10 * time.Second)
	if got := f.Due(); len(got) != 1 || got[0].Kind != events.ReclaimInterruption {
		t.Fatalf("Due = %+v, want one interruption", got)
	}
}
