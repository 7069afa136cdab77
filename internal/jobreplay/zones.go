package jobreplay

import (
	"context"
	"fmt"
)

// EvaluateZones replays the job with every zone of ms allowed at once (one market, the files
// aligned by index, one on-demand offer), and beside each policy the single zone where that
// policy cost least over the same windows, and what the zones together save over it.
func EvaluateZones(ctx context.Context, job Job, name string, ms []Market, count int, names []string) ([]Result, error) {
	all, err := Join(name, ms)
	if err != nil {
		return nil, err
	}
	starts := WindowStarts(all.Len(), all.Tick, count)
	res, err := Evaluate(ctx, job, at(&all, starts), names)
	if err != nil {
		return nil, err
	}
	for i := range res {
		if err := bestZone(ctx, job, ms, starts, &res[i]); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// bestZone fills a result's single-zone comparison: the policy alone in each zone, same starts.
func bestZone(ctx context.Context, job Job, ms []Market, starts []int, r *Result) error {
	for i := range ms {
		one, err := meanOutcome(ctx, r.Policy, job, at(&ms[i], starts))
		if err != nil {
			return fmt.Errorf("zone %s alone: %w", ms[i].Name, err)
		}
		if r.BestZone == "" || one.MeanCost < r.BestZoneCost {
			r.BestZone, r.BestZoneCost = ms[i].Name, one.MeanCost
		}
	}
	r.SavingPct = 100 * (r.BestZoneCost - r.MeanCost) / r.BestZoneCost
	return nil
}

// at is the windows of one market at the given starts.
func at(m *Market, starts []int) []Window {
	out := make([]Window, len(starts))
	for i, s := range starts {
		out[i] = Window{m, s}
	}
	return out
}
