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

func TestPlanJob(t *testing.T) {
	const g = 10 * time.Minute
	base := placement.JobView{Work: 48 * time.Hour, Deadline: 52 * time.Hour, Overhead: 3 * time.Minute,
		Tick: g, Running: -1, Last: -1}
	with := func(f func(*placement.JobView)) placement.JobView { v := base; f(&v); return v }
	tests := []struct {
		name   string
		view   placement.JobView
		spotUp bool
		want   int
	}{
		{name: "spot when it is there", view: base, spotUp: true, want: 1},
		{name: "wait at the start when spot is gone", view: base, want: -1},
		{name: "on-demand when behind the even pace", spotUp: false, want: 0,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 9 * time.Hour })},
		{name: "stay on spot while it lasts, even when behind", spotUp: true, want: 1,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 9 * time.Hour; v.Running = 1 })},
		{name: "stay on on-demand while spot is gone", want: 0,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 20 * time.Hour; v.Running = 0 })},
		{name: "leave on-demand for spot once ahead by two changeovers", spotUp: true, want: 1,
			view: with(func(v *placement.JobView) { v.Elapsed = 10 * time.Hour; v.Done = 20 * time.Hour; v.Running = 0 })},
		{name: "keep on-demand for spot while not ahead by two changeovers", spotUp: true, want: 0,
			view: with(func(v *placement.JobView) {
				v.Elapsed = 10 * time.Hour
				v.Done = 10*48*time.Hour/52 + time.Minute
				v.Running = 0
			})},
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
			offers = append(offers, placement.JobOffer{Location: "y", Market: placement.MarketReserved,
				PricePerHour: 3.5, Available: true, Uptime: 1})
			if got := placement.PlanJob(tt.view, offers); got != tt.want {
				t.Errorf("PlanJob = %d, want %d", got, tt.want)
			}
		})
	}
}
