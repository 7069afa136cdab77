package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

func TestStatusRows(t *testing.T) {
	books := map[string]*arbiter.Book{"svc": {Workload: "svc",
		Replicas: []arbiter.Rep{
			{ID: "r1", Location: "a", Market: events.Spot, State: placement.StateReady, PricePerHour: 1},
			{ID: "r2", Location: "a", Market: events.Spot, State: placement.StateReclaimed, PricePerHour: 1},
			{ID: "r3", Location: "b", Market: events.OnDemand, State: placement.StateLaunching, PricePerHour: 3},
			{ID: "r4", Location: "b", Market: events.OnDemand, State: placement.StateDraining, PricePerHour: 3},
		},
		Actions: []arbiter.Record{
			{Target: actuate.Target{Group: actuate.Group{Workload: "svc", Location: "b", Market: events.OnDemand}}, Stage: arbiter.StageCalling},
			{Target: actuate.Target{Group: actuate.Group{Workload: "svc", Location: "b", Market: events.OnDemand}}, Stage: arbiter.StageAwaiting},
		}}}
	rows := statusRows(books)
	want := []map[string]any{
		{"location": "a", "market": "spot", "replicas": 2, "ready": 1, "reclaimed": 1, "usd_per_hour": 2.0, "pending": 0},
		{"location": "b", "market": "on_demand", "replicas": 1, "launching": 1, "draining": 1, "usd_per_hour": 6.0,
			"pending": 1, "awaiting_approval": 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %v", rows)
	}
	for i, w := range want {
		for k, v := range w {
			if rows[i][k] != v {
				t.Errorf("row %d %s = %v, want %v", i, k, rows[i][k], v)
			}
		}
	}
}

// TestStatusWithNothingPlacedSaysWhy: "arbiter status" against an arbiter with no fleet printed a
// bare header. It says that nothing is placed, and what to start.
func TestStatusWithNothingPlacedSaysWhy(t *testing.T) {
	env := bustest.Start(t)
	if err := bus.Ensure(context.Background(), env.JS, bus.Options{}); err != nil {
		t.Fatal(err)
	}
	var g cli.Globals
	root := cli.Root("arbiter", "", "", &g, "", "")
	root.AddCommand(newStatusCmd(&g))
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"--nats", env.Server.ClientURL(), "--log-level", "error",
		"--nats-nkey", bus.SeedFile(env.CredsDir, bus.RoleArbiter), "status"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "no workload is placed") || !strings.Contains(errOut.String(), "arbiter run --config") {
		t.Errorf("status with nothing placed: stderr %q, want why and what to start\nstdout:\n%s", errOut.String(), out.String())
	}
}
