package placement_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// hugeEstate is one workload over a few locations and offers, half of its replicas running, the
// rest to launch: the shape that used to keep a plan busy for minutes.
func hugeEstate(want, running int) placement.Snapshot {
	var s placement.Snapshot
	for i := range 4 {
		s.Locations = append(s.Locations, placement.Location{ID: fmt.Sprintf("l%d", i), Zone: fmt.Sprintf("z%d", i)})
	}
	for i := range 20 {
		m := placement.MarketSpot
		if i%2 == 1 {
			m = placement.MarketOnDemand
		}
		s.Offers = append(s.Offers, placement.Offer{ID: fmt.Sprintf("o%02d", i), Location: fmt.Sprintf("l%d", i%4),
			InstanceType: fmt.Sprintf("t%d", i), GPUModel: "H100-80GB", GPUCount: 1, GPUMemoryGB: 80, Market: m,
			PricePerHour: 1 + float64(i)/10})
	}
	s.Workloads = []placement.Workload{{ID: "huge", GPUModels: []string{"H100-80GB"}, GPUsPerReplica: 1,
		MinReplicas: want, MinLocations: 2, ColdStart: time.Minute}}
	for i := range running {
		s.Replicas = append(s.Replicas, placement.Replica{ID: fmt.Sprintf("r%06d", i), Workload: "huge",
			Offer: fmt.Sprintf("o%02d", i%20), State: placement.StateReady, Since: propNow.Add(-time.Hour)})
	}
	return s
}

// cancelAfter is a context whose Err turns to context.Canceled after n calls: it cancels a plan
// part way through, at a point that does not depend on the machine's speed.
type cancelAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

func TestPlanStopsWhenCancelled(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		snap placement.Snapshot
	}{
		{"cancelled before the call", cancelled, hugeEstate(placement.MaxReplicas, placement.MaxReplicas/2)},
		{"cancelled inside one workload's fill", &cancelAfter{Context: context.Background(), n: 50},
			hugeEstate(placement.MaxReplicas, placement.MaxReplicas/2)},
		{"cancelled between workloads", &cancelAfter{Context: context.Background(), n: 30}, smallEstates(20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := placement.PlanContext(tt.ctx, tt.snap, placement.Policy{}, propNow)
			if !errors.Is(err, placement.ErrStopped) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want ErrStopped wrapping context.Canceled", err)
			}
			if len(d.Actions) != 0 {
				t.Errorf("a stopped plan returned %d actions, want none", len(d.Actions))
			}
			if !strings.Contains(err.Error(), "planning workload ") {
				t.Errorf("err = %q does not name the workload", err)
			}
			if c, ok := tt.ctx.(*cancelAfter); ok && c.calls.Load() > c.n+5 {
				t.Errorf("the planner asked the context %d times after it was done; want it to stop at once", c.calls.Load()-c.n)
			}
		})
	}
}

// smallEstates is n one-replica workloads on one offer.
func smallEstates(n int) placement.Snapshot {
	s := hugeEstate(1, 0)
	s.Workloads = s.Workloads[:0]
	for i := range n {
		s.Workloads = append(s.Workloads, placement.Workload{ID: fmt.Sprintf("w%02d", i), GPUModels: []string{"H100-80GB"}, MinReplicas: 1})
	}
	return s
}

func TestPlanContextNotCancelledIsPlan(t *testing.T) {
	s := hugeEstate(40, 10)
	d, err := placement.PlanContext(context.Background(), s, placement.Policy{}, propNow)
	if err != nil {
		t.Fatal(err)
	}
	want := placement.Plan(s, placement.Policy{}, propNow)
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("PlanContext = %v\nwant Plan's %v", d, want)
	}
}

// TestPlanCapsReplicasAtTheLimit: a demand above MaxReplicas (from telemetry gone wrong) is
// planned at the limit, and the shortfall says so, instead of exhausting memory or time.
func TestPlanCapsReplicasAtTheLimit(t *testing.T) {
	tests := []struct {
		name string
		w    func(*placement.Workload)
	}{
		{"demand", func(w *placement.Workload) { w.MinReplicas, w.Demand = 1, placement.MaxReplicas+500 }},
		{"minimum", func(w *placement.Workload) { w.MinReplicas = placement.MaxReplicas + 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := hugeEstate(0, 0)
			tt.w(&s.Workloads[0])
			d := placement.Plan(s, placement.Policy{MaxHedge: -1, DisableFallback: true}, propNow)
			launched := 0
			for _, a := range d.Actions {
				if a.Kind == placement.ActionLaunch {
					launched += a.Count
				}
			}
			if launched != placement.MaxReplicas {
				t.Errorf("launched %d replicas, want the limit %d", launched, placement.MaxReplicas)
			}
			if len(d.Shortfalls) != 1 || !strings.Contains(d.Shortfalls[0].Why, "limit of 10000") {
				t.Errorf("shortfalls = %+v, want one naming the limit", d.Shortfalls)
			}
		})
	}
}

// TestPlanSaysWhyAWorkloadPlacesNowhere: the shortfall of a workload no offer can host tells a
// fleet file that matches nothing from capacity that is short.
func TestPlanSaysWhyAWorkloadPlacesNowhere(t *testing.T) {
	tests := []struct {
		name    string
		models  []string
		offers  bool
		wantWhy string
	}{
		{"unknown model", []string{"H900-1TB"}, true, "no offer fits its GPU models"},
		{"no prices yet", []string{"H100-80GB"}, false, "no offers priced yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := hugeEstate(2, 0)
			s.Workloads[0].GPUModels = tt.models
			if !tt.offers {
				s.Offers = nil
			}
			d := placement.Plan(s, placement.Policy{}, propNow)
			if len(d.Shortfalls) != 1 || d.Shortfalls[0].Placed != 0 || !strings.Contains(d.Shortfalls[0].Why, tt.wantWhy) {
				t.Errorf("shortfalls = %+v, want one placing 0 because %q", d.Shortfalls, tt.wantWhy)
			}
		})
	}
}

// BenchmarkPlanHugeWorkload plans one workload at the replica limit, half of it running.
func BenchmarkPlanHugeWorkload(b *testing.B) {
	s := hugeEstate(placement.MaxReplicas, placement.MaxReplicas/2)
	for b.Loop() {
		placement.Plan(s, placement.Policy{}, propNow)
	}
}
