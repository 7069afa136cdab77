package arbiter

import (
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// TestSpellsAreWhatTheDeadlinePlannerLearnsFrom: the spells with and without spot a job's
// decisions saw (the planner was told none: it judged waiting from priors alone) come out as
// PlanJob's Outage, Outages, SpotFor, SpotRuns and History.
func TestSpellsAreWhatTheDeadlinePlannerLearnsFrom(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	var s spells
	for i, sight := range []sighting{spotThere, spotThere, spotGone, spotGone, spotGone, spotThere, spotGone} {
		s.see(sight, t0.Add(time.Duration(i)*time.Minute))
	}
	now := t0.Add(8 * time.Minute)
	outage, outages, spotFor, runs, history := s.view(now)
	if outage != 2*time.Minute || spotFor != 2*time.Minute || history != 8*time.Minute {
		t.Errorf("outage %v, spot for %v, history %v; want 2m, 2m (since spot was seen gone), 8m", outage, spotFor, history)
	}
	if !slices.Equal(outages, []time.Duration{3 * time.Minute}) || !slices.Equal(runs, []time.Duration{2 * time.Minute, time.Minute}) {
		t.Errorf("outages %v, runs %v; want [3m] and [2m 1m]", outages, runs)
	}
	for i := range 2 * maxSpells {
		s.see(sighting(1+i%2), now.Add(time.Duration(i)*time.Minute))
	}
	if _, o, _, r, _ := s.view(now.Add(time.Hour * 24)); len(o) > maxSpells || len(r) > maxSpells {
		t.Errorf("kept %d outages and %d runs, want at most %d each", len(o), len(r), maxSpells)
	}
}

// TestSpellsGoOnWhileNothingIsSeen: a decision that tries no spot learns nothing, and the spell
// it is in goes on (the spells followed "not lost within the last interval", so a job on
// on-demand saw spot back one interval after each failed try: a one-interval run of spot and a
// one-interval spell without it for every try). In a spell without spot, SpotFor is the time
// since spot was last seen gone.
func TestSpellsGoOnWhileNothingIsSeen(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	var s spells
	seq := []sighting{spotThere, spotGone, spotUnknown, spotGone, spotUnknown, spotUnknown, spotThere, spotUnknown, spotUnknown}
	for i, sight := range seq {
		s.see(sight, t0.Add(time.Duration(i)*time.Minute))
	}
	outage, outages, spotFor, runs, _ := s.view(t0.Add(9 * time.Minute))
	if !slices.Equal(outages, []time.Duration{5 * time.Minute}) || !slices.Equal(runs, []time.Duration{time.Minute}) {
		t.Errorf("outages %v, runs %v; want [5m] and [1m]", outages, runs)
	}
	if outage != 0 || spotFor != 3*time.Minute {
		t.Errorf("outage %v, spot for %v; want 0 and 3m", outage, spotFor)
	}
	var u spells
	for i, sight := range []sighting{spotGone, spotUnknown, spotUnknown} {
		u.see(sight, t0.Add(time.Duration(i)*time.Minute))
	}
	if outage, _, spotFor, _, _ := u.view(t0.Add(3 * time.Minute)); outage != 3*time.Minute || spotFor != 3*time.Minute {
		t.Errorf("after spot was seen gone once: outage %v, spot for %v; want 3m, 3m", outage, spotFor)
	}
	u.see(spotGone, t0.Add(3*time.Minute))
	if outage, _, spotFor, _, _ := u.view(t0.Add(4 * time.Minute)); outage != 4*time.Minute || spotFor != time.Minute {
		t.Errorf("seen gone again: outage %v, spot for %v; want 4m, 1m", outage, spotFor)
	}
	var w spells // spot taken as there before any sighting: no run was seen when it is found gone
	for i, sight := range []sighting{spotUnknown, spotUnknown, spotGone, spotThere} {
		w.see(sight, t0.Add(time.Duration(i)*time.Minute))
	}
	if _, outages, _, runs, history := w.view(t0.Add(4 * time.Minute)); len(runs) != 0 || !slices.Equal(outages, []time.Duration{time.Minute}) || history != 4*time.Minute {
		t.Errorf("runs %v, outages %v, history %v; want none, [1m], 4m", runs, outages, history)
	}
}

// TestJobTriesSpotAnIntervalAfterItsLastLoss: a launch that finds no capacity is given up at the
// next report and the job placed again, so a failed try costs an idle job one report, as it does
// one whose instance runs: both may try an offer again once a whole interval has passed since its
// last loss (an idle job was kept off it for a further decision, and the planner, told spot was
// not there, took on-demand the tick spot came back). An idle job still skips unlikely offers.
func TestJobTriesSpotAnIntervalAfterItsLastLoss(t *testing.T) {
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	s := &Service{o: Options{Interval: 10 * time.Minute}}
	lost := func(ago time.Duration, kind placement.ObservationKind, usable bool) placement.Estimate {
		return placement.Estimate{Usable: usable, Offer: placement.Offer{Market: placement.MarketSpot,
			History: []placement.Observation{{At: now.Add(-ago), Kind: kind}}}}
	}
	tests := []struct {
		name    string
		e       placement.Estimate
		running bool
		want    bool
	}{
		{"idle, failed try at the last decision", lost(10*time.Minute, placement.ObsLaunchFailed, true), false, true},
		{"idle, reclaimed at the last decision", lost(10*time.Minute, placement.ObsPreempted, true), false, true},
		{"idle, failed try within the interval", lost(10*time.Minute-time.Second, placement.ObsLaunchFailed, true), false, false},
		{"idle, unlikely offer", lost(time.Hour, placement.ObsLaunchFailed, false), false, false},
		{"running, failed try at the last decision", lost(10*time.Minute, placement.ObsLaunchFailed, true), true, true},
		{"running, failed try within the interval", lost(time.Minute, placement.ObsLaunchFailed, true), true, false},
		{"running, unlikely offer", lost(time.Hour, placement.ObsLaunchFailed, false), true, true},
		{"running, launched there", lost(time.Minute, placement.ObsLaunched, false), true, true},
	}
	for _, tt := range tests {
		if got := s.mayTry(tt.e, tt.running, now); got != tt.want {
			t.Errorf("%s: mayTry = %v, want %v", tt.name, got, tt.want)
		}
	}
}
