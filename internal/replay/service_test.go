package replay

import (
	"context"
	"testing"
)

// TestServiceMatchesDirect replays small hand-made traces through the arbiter service and through
// the planner alone: the two paths see the same market and must give the same figures.
func TestServiceMatchesDirect(t *testing.T) {
	const n = 240
	steady := func(z, t int) int { return 4 }
	tests := []struct {
		name string
		cap  func(z, t int) int
	}{
		{"steady capacity", steady},
		{"zone a empties for an hour", func(z, t int) int {
			if z == 0 && t >= 60 && t < 180 {
				return 0
			}
			return 4
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Trace{Name: tt.name, Len: n}
			for z, name := range []string{"a", "b", "c"} {
				zone := Zone{Name: name, Capacity: make([]int, n)}
				for i := range n {
					zone.Capacity[i] = tt.cap(z, i)
				}
				tr.Zones = append(tr.Zones, zone)
			}
			cfg := Config{Rules: Rules{Target: 3, Extra: 1, ColdStart: 4, Window: 200, ODRatio: 3}, Offsets: []int{20}}
			res, err := Evaluate(context.Background(), tr, cfg, []PolicySpec{{Name: "bursar-direct", Extra: -1}, {Name: "bursar", Extra: -1}})
			if err != nil {
				t.Fatal(err)
			}
			direct, svc := res[0], res[1]
			t.Logf("direct %.2f%% / %.2f%%, service %.2f%% / %.2f%%", direct.AvailabilityPct, direct.CostPct, svc.AvailabilityPct, svc.CostPct)
			if d := svc.AvailabilityPct - direct.AvailabilityPct; d < -0.3 || d > 0.3 {
				t.Errorf("availability: service %.2f%%, direct %.2f%%: want within 0.3 points", svc.AvailabilityPct, direct.AvailabilityPct)
			}
			if d := svc.CostPct - direct.CostPct; d < -1 || d > 1 {
				t.Errorf("cost: service %.2f%%, direct %.2f%%: want within 1 point", svc.CostPct, direct.CostPct)
			}
		})
	}
}
