package arbiter

import (
	"reflect"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// TestRestoringCountsWhatWasLostAndTheSparesBackingIt: of a pass's launches for a workload short
// of what it had, the replacements restore up to the shortfall, with the spares the planner adds
// beyond what is missing unless it is missing more (growth); growth, hedges and moves do not, and
// a launch that restores part of its count is split.
func TestRestoringCountsWhatWasLostAndTheSparesBackingIt(t *testing.T) {
	launch := func(id string, r placement.Reason, n int) placement.Action {
		return placement.Action{ID: id, Kind: placement.ActionLaunch, Workload: "svc", Reason: r, Count: n, CostPerHour: float64(n)}
	}
	rep := func(st placement.ReplicaState) Rep { return Rep{State: st} }
	ready2 := []Rep{rep(placement.StateReady), rep(placement.StateReady)}
	lostOne := Loss{Replicas: 1, Had: 3, Since: t0}
	tests := []struct {
		name      string
		target    int
		lost      Loss
		reps      []Rep
		acts      []placement.Action
		wantCount map[string]int // restoring launches by id, with their counts
	}{
		{"nothing lost: nothing restores", 3, Loss{}, ready2,
			[]placement.Action{launch("up", placement.ReasonDemandUp, 1)}, map[string]int{}},
		{"a replacement and the spares backing it", 3, lostOne, ready2,
			[]placement.Action{launch("up", placement.ReasonDemandUp, 1), launch("fb", placement.ReasonFallback, 2)},
			map[string]int{"up": 1, "fb": 2}},
		{"growth beyond the shortfall waits, and so do the spares", 4, lostOne, ready2,
			[]placement.Action{launch("up", placement.ReasonDemandUp, 2), launch("fb", placement.ReasonFallback, 2)},
			map[string]int{restoreID("fb"): 1}},
		{"growth in one launch with a replacement: split", 4, lostOne, ready2,
			[]placement.Action{launch("up", placement.ReasonDemandUp, 2)}, map[string]int{restoreID("up"): 1}},
		{"a reclaim's replacement first, then growth", 4, lostOne, append(ready2, rep(placement.StateReclaimed)),
			[]placement.Action{launch("up", placement.ReasonDemandUp, 1), launch("rc", placement.ReasonReclaim, 1)},
			map[string]int{"rc": 1}},
		{"hedges and moves never", 3, lostOne, ready2,
			[]placement.Action{launch("h", placement.ReasonHedge, 1), launch("mv", placement.ReasonCheaperOffer, 1)}, map[string]int{}},
		{"back at what it had: nothing", 2, Loss{Replicas: 1, Had: 2, Since: t0}, ready2,
			[]placement.Action{launch("up", placement.ReasonDemandUp, 1)}, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{books: map[string]*Book{"svc": {Workload: "svc", Replicas: tt.reps, Lost: tt.lost}},
				resp: responder{targets: map[string]int{"svc": tt.target}}}
			acts, ids := l.restoring(tt.acts)
			got, total, cost := map[string]int{}, 0, 0.0
			for _, a := range acts {
				if ids[a.ID] {
					got[a.ID] = a.Count
				}
				total += a.Count
				cost += a.CostPerHour
			}
			if !reflect.DeepEqual(got, tt.wantCount) {
				t.Errorf("restoring %v, want %v", got, tt.wantCount)
			}
			want := 0
			for _, a := range tt.acts {
				want += a.Count
			}
			if total != want || cost != float64(want) {
				t.Errorf("the actions launch %d replicas for %.2f/h after splitting, want %d as before", total, cost, want)
			}
		})
	}
}

var t0 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
