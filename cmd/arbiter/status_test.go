package main

import (
	"testing"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/arbiter"
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
