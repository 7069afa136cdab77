package placement_test

import (
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// jobOffers is one on-demand offer (index 0) and one spot offer (index 1) at one location.
func jobOffers(spotUp bool) []placement.JobOffer {
	return []placement.JobOffer{
		{Location: "z", Market: placement.MarketOnDemand, PricePerHour: 3.06, Available: true, Uptime: 1},
		{Location: "z", Market: placement.MarketSpot, PricePerHour: 0.9731, Available: spotUp, Hazard: 0.1, Uptime: 0.5},
	}
}

// spellsSeen is a market history of ten 10-minute spells (or runs) and two of 5 hours over 10 h.
func spellsSeen() []time.Duration {
	out := make([]time.Duration, 0, 12)
	for range 10 {
		out = append(out, 10*time.Minute)
	}
	return append(out, 5*time.Hour, 5*time.Hour)
}

// loose is an idle job 10 h into a 70 h deadline with 38 h of work left in a spell with no spot,
// having seen spellsSeen: 72 spells to come, and slack for 15 minutes of each, which allows
// waiting up to 37 minutes ((10·10 + 2·(tau + 3)) / 12 ≤ 15).
func loose(v *placement.JobView) {
	v.Deadline, v.Elapsed, v.Done = 70*time.Hour, 10*time.Hour, 10*time.Hour
	v.Outages, v.History = spellsSeen(), 10*time.Hour
}

// tight is a job 10 h into a 52 h deadline with 38 h of work left, having seen the spot runs of
// spellsSeen: 50.4 runs to come, slack for 37.8 moves of two changeovers, so only the runs that
// outlive 10 minutes are worth a move from on-demand.
func tight(v *placement.JobView) {
	v.Elapsed, v.Done = 10*time.Hour, 10*time.Hour
	v.SpotRuns, v.History = spellsSeen(), 10*time.Hour
}

func TestPlanJob(t *testing.T) {
	const g = 10 * time.Minute
	base := placement.JobView{Work: 48 * time.Hour, Deadline: 52 * time.Hour, Overhead: 3 * time.Minute,
		Tick: g, Running: -1, Last: -1}
	with := func(f func(*placement.JobView)) placement.JobView { v := base; f(&v); return v }
	tests := []struct {
		name   string
		view   placement.JobView
		spotUp bool
		hazard float64 // the spot offer's, 0.1 when 0
		want   int
	}{
		{name: "spot when it is there", view: base, spotUp: true, want: 1},
		{name: "wait at the start when spot is gone", view: base, want: -1},
		{name: "wait out a spell the slack can pay for", want: -1,
			view: with(func(v *placement.JobView) { loose(v); v.Outage = 20 * time.Minute })},
		{name: "on-demand once a spell outlasts what the slack can wait", want: 0,
			view: with(func(v *placement.JobView) { loose(v); v.Outage = 40 * time.Minute })},
		{name: "waits keep the slack one more spot launch needs", want: 0,
			view: with(func(v *placement.JobView) {
				// 67 min of slack, 4.2 spells of 10 min to come: 31.4 min to wait with once 12.6 min
				// for their spot launches and 23 min for one more are kept, so 4.5 min a spell
				v.Elapsed, v.Done = 10*time.Hour, 7*time.Hour+10*time.Minute
				v.Outages, v.History = []time.Duration{10 * time.Minute}, 10*time.Hour
				v.Outage = 5 * time.Minute
			})},
		{name: "on-demand at once when the slack cannot wait", want: 0,
			view: with(func(v *placement.JobView) { loose(v); v.Deadline = 52 * time.Hour })},
		{name: "stay on spot while it lasts, even when behind", spotUp: true, want: 1,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 9 * time.Hour; v.Running = 1 })},
		{name: "stay on on-demand while spot is gone", want: 0,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 20 * time.Hour; v.Running = 0 })},
		{name: "leave on-demand for spot expected to last", spotUp: true, want: 1,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 20 * time.Hour; v.Running = 0 })},
		{name: "keep on-demand for spot expected to go at once", spotUp: true, hazard: 20, want: 0,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 20 * time.Hour; v.Running = 0 })},
		{name: "keep on-demand for a spot run younger than the slack can pay a move for", spotUp: true, want: 0,
			view: with(func(v *placement.JobView) { tight(v); v.Running = 0 })},
		{name: "move to a spot run old enough", spotUp: true, want: 1,
			view: with(func(v *placement.JobView) { tight(v); v.Running = 0; v.SpotFor = 10 * time.Minute })},
		{name: "launch spot from idle whatever its age", spotUp: true, want: 1,
			view: with(func(v *placement.JobView) { tight(v) })},
		{name: "the guarantee: on-demand when one idle tick would leave too little", spotUp: true, want: 0,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 6*time.Hour + 20*time.Minute })},
		{name: "one tick more slack: spot again", spotUp: true, want: 1,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 6*time.Hour + 30*time.Minute })},
		{name: "the guarantee: off spot too", spotUp: true, want: 0,
			view: with(func(v *placement.JobView) {
				v.Elapsed = 10 * time.Hour
				v.Done = 6*time.Hour + 20*time.Minute
				v.Running = 1
			})},
		{name: "the guarantee keeps a running on-demand offer", spotUp: true, want: 2,
			view: with(func(v *placement.JobView) {
				v.Elapsed = 10 * time.Hour
				v.Done = 6*time.Hour + 20*time.Minute
				v.Running = 2
			})},
		{name: "done: nothing to run", spotUp: true, want: -1,
			view: with(func(v *placement.JobView) { v.Done = v.Work })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers := jobOffers(tt.spotUp)
			if tt.hazard > 0 {
				offers[1].Hazard = tt.hazard
			}
			offers = append(offers, placement.JobOffer{Location: "y", Market: placement.MarketReserved,
				PricePerHour: 3.5, Available: true, Uptime: 1})
			if got := placement.PlanJob(tt.view, offers); got != tt.want {
				t.Errorf("PlanJob = %d, want %d", got, tt.want)
			}
		})
	}
}
