package arbiter

import (
	"slices"
	"testing"
	"time"
)

// TestSpellsAreWhatTheDeadlinePlannerLearnsFrom: the spells with and without spot a job's
// decisions saw (the planner was told none: it judged waiting from priors alone) come out as
// PlanJob's Outage, Outages, SpotFor, SpotRuns and History.
func TestSpellsAreWhatTheDeadlinePlannerLearnsFrom(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	var s spells
	for i, spot := range []bool{true, true, false, false, false, true, false} {
		s.see(spot, t0.Add(time.Duration(i)*time.Minute))
	}
	now := t0.Add(8 * time.Minute)
	outage, outages, spotFor, runs, history := s.view(now)
	if outage != 2*time.Minute || spotFor != 0 || history != 8*time.Minute {
		t.Errorf("outage %v, spot for %v, history %v; want 2m, 0, 8m", outage, spotFor, history)
	}
	if !slices.Equal(outages, []time.Duration{3 * time.Minute}) || !slices.Equal(runs, []time.Duration{2 * time.Minute, time.Minute}) {
		t.Errorf("outages %v, runs %v; want [3m] and [2m 1m]", outages, runs)
	}
	for i := range 2 * maxSpells {
		s.see(i%2 == 0, now.Add(time.Duration(i)*time.Minute))
	}
	if _, o, _, r, _ := s.view(now.Add(time.Hour * 24)); len(o) > maxSpells || len(r) > maxSpells {
		t.Errorf("kept %d outages and %d runs, want at most %d each", len(o), len(r), maxSpells)
	}
}
