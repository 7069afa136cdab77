package arbiter

import (
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// TestTwoDrainsOfOneGroupTakeTwoReplicas: a plan that drains a group twice (two actions, one
// replica each) takes two replicas, the one not ready and then the newest ready, not the same
// one twice; the group keeps its oldest.
func TestTwoDrainsOfOneGroupTakeTwoReplicas(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	rep := func(id string, st placement.ReplicaState, age time.Duration) Rep {
		return Rep{ID: id, Location: "a", Market: events.Spot, State: st, Since: t0.Add(-age)}
	}
	b := &Book{Workload: "svc", Replicas: []Rep{rep("old", placement.StateReady, time.Hour),
		rep("new", placement.StateReady, time.Minute), rep("booting", placement.StateLaunching, 0)}}
	g := actuate.Group{Workload: "svc", Location: "a", Market: events.Spot}
	taken := map[string]bool{}
	var got []string
	for _, asked := range []string{"old", "new"} {
		d := scaleDownOrder(b, g, []string{asked}, taken)
		for _, id := range d {
			taken[id] = true
		}
		got = append(got, d...)
	}
	if want := []string{"booting", "new"}; !slices.Equal(got, want) {
		t.Errorf("two drains took %v, want %v", got, want)
	}
}
