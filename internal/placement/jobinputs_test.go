package placement_test

import (
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// jobT0 is the time of the first decision in the job input tests.
var jobT0 = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

// lostAt is an estimate of an offer of market m whose history holds one observation of kind
// ago before now.
func lostAt(m placement.Market, usable bool, now time.Time, ago time.Duration, kind placement.ObservationKind) placement.Estimate {
	return placement.Estimate{Usable: usable, Offer: placement.Offer{Market: m,
		History: []placement.Observation{{At: now.Add(-ago), Kind: kind}}}}
}

// TestSpellsAreWhatPlanJobLearnsFrom: the spells with and without spot a job's decisions saw, one
// sighting a minute from jobT0, come out as PlanJob's Outage, Outages, SpotFor, SpotRuns and
// History. A decision that tries no spot learns nothing, and the spell it is in goes on; in a
// spell without spot, SpotFor is the time since spot was last seen gone; before any sighting spot
// counts as there, and that assumed spell is no run seen.
func TestSpellsAreWhatPlanJobLearnsFrom(t *testing.T) {
	const (
		unknown = placement.SpotUnknown
		there   = placement.SpotThere
		gone    = placement.SpotGone
	)
	m := time.Minute
	tests := []struct {
		name        string
		sights      []placement.Sighting
		at          time.Duration // after jobT0
		wantOutage  time.Duration
		wantOutages []time.Duration
		wantSpotFor time.Duration
		wantRuns    []time.Duration
	}{
		{"runs and spells seen whole", []placement.Sighting{there, there, gone, gone, gone, there, gone}, 8 * m,
			2 * m, []time.Duration{3 * m}, 2 * m, []time.Duration{2 * m, m}},
		{"nothing tried: the spell goes on", []placement.Sighting{there, gone, unknown, gone, unknown, unknown, there, unknown, unknown}, 9 * m,
			0, []time.Duration{5 * m}, 3 * m, []time.Duration{m}},
		{"gone once: spot for since the spell began", []placement.Sighting{gone, unknown, unknown}, 3 * m,
			3 * m, nil, 3 * m, nil},
		{"gone again: spot for since last seen gone", []placement.Sighting{gone, unknown, unknown, gone}, 4 * m,
			4 * m, nil, m, nil},
		{"assumed spot found gone is no run", []placement.Sighting{unknown, unknown, gone, there}, 4 * m,
			0, []time.Duration{m}, m, nil},
		{"nothing seen yet: spot assumed there", []placement.Sighting{unknown}, 5 * m,
			0, nil, 5 * m, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s placement.Spells
			for i, sight := range tt.sights {
				s.See(sight, jobT0.Add(time.Duration(i)*m))
			}
			var v placement.JobView
			s.Fill(&v, jobT0.Add(tt.at))
			if v.Outage != tt.wantOutage || v.SpotFor != tt.wantSpotFor || v.History != tt.at {
				t.Errorf("outage %v, spot for %v, history %v; want %v, %v, %v", v.Outage, v.SpotFor, v.History,
					tt.wantOutage, tt.wantSpotFor, tt.at)
			}
			if !slices.Equal(v.Outages, tt.wantOutages) || !slices.Equal(v.SpotRuns, tt.wantRuns) {
				t.Errorf("outages %v, runs %v; want %v and %v", v.Outages, v.SpotRuns, tt.wantOutages, tt.wantRuns)
			}
		})
	}
}

// TestSpellsKeepABoundedHistory: a job that sees spot come and go at every decision keeps at most
// MaxSpells spells of each kind, the latest.
func TestSpellsKeepABoundedHistory(t *testing.T) {
	var s placement.Spells
	for i := range 2*placement.MaxSpells + 1 {
		sight := placement.SpotThere
		if i%2 == 1 {
			sight = placement.SpotGone
		}
		s.See(sight, jobT0.Add(time.Duration(i)*time.Minute))
	}
	var v placement.JobView
	s.Fill(&v, jobT0.Add(24*time.Hour))
	if len(v.Outages) != placement.MaxSpells || len(v.SpotRuns) != placement.MaxSpells {
		t.Errorf("kept %d outages and %d runs, want %d each", len(v.Outages), len(v.SpotRuns), placement.MaxSpells)
	}
}

// TestSightIsWhatADecisionLearnsOfSpot: spot is there while the job's spot instance runs, gone
// when every spot offer lost capacity at the last decision (one interval ago) or since, and
// otherwise unknown: an offer not tried, or lost longer ago, says nothing.
func TestSightIsWhatADecisionLearnsOfSpot(t *testing.T) {
	now := jobT0.Add(6 * time.Hour)
	const interval = 10 * time.Minute
	spot, od := placement.MarketSpot, placement.MarketOnDemand
	failed, reclaimed, launched := placement.ObsLaunchFailed, placement.ObsPreempted, placement.ObsLaunched
	tests := []struct {
		name        string
		spotRunning bool
		est         []placement.Estimate
		want        placement.Sighting
	}{
		{"spot instance runs", true, []placement.Estimate{lostAt(spot, true, now, time.Minute, failed)}, placement.SpotThere},
		{"every spot offer lost at the last decision", false, []placement.Estimate{lostAt(spot, true, now, interval, failed),
			lostAt(spot, true, now, time.Minute, reclaimed)}, placement.SpotGone},
		{"on-demand says nothing of spot", false, []placement.Estimate{lostAt(od, true, now, time.Hour, launched),
			lostAt(spot, true, now, time.Minute, failed)}, placement.SpotGone},
		{"one spot offer not tried", false, []placement.Estimate{lostAt(spot, true, now, time.Minute, failed),
			lostAt(spot, true, now, time.Minute, launched)}, placement.SpotUnknown},
		{"lost before the last decision", false, []placement.Estimate{lostAt(spot, true, now, interval+time.Second, failed)}, placement.SpotUnknown},
		{"a loss dated after now", false, []placement.Estimate{lostAt(spot, true, now, -time.Second, failed)}, placement.SpotUnknown},
		{"no spot offer", false, []placement.Estimate{lostAt(od, true, now, time.Minute, failed)}, placement.SpotUnknown},
	}
	for _, tt := range tests {
		if got := placement.Sight(tt.spotRunning, tt.est, now, interval); got != tt.want {
			t.Errorf("%s: Sight = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestJobTriesSpotAnIntervalAfterItsLastLoss: a launch that finds no capacity is given up at the
// next report and the job placed again, so a failed try costs an idle job one report, as it does
// one whose instance runs: both may try an offer again once a whole interval has passed since its
// last loss (an idle job was kept off it for a further decision, and the planner, told spot was
// not there, took on-demand the tick spot came back). An idle job still skips unlikely offers.
func TestJobTriesSpotAnIntervalAfterItsLastLoss(t *testing.T) {
	now := jobT0.Add(6 * time.Hour)
	const interval = 10 * time.Minute
	lost := func(ago time.Duration, kind placement.ObservationKind, usable bool) placement.Estimate {
		return lostAt(placement.MarketSpot, usable, now, ago, kind)
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
		if got := placement.MayTry(tt.e, tt.running, now, interval); got != tt.want {
			t.Errorf("%s: MayTry = %v, want %v", tt.name, got, tt.want)
		}
	}
}
