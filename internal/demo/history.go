package demo

import (
	"context"
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
)

// The demo's ready shares and ready samples come from the report package's availability
// (report.Availability, report.ReadySteps), the same code as `report availability`.

// readyShare is, per workload and location, the ready replica-hours against the desired ones
// over the window.
type readyShare struct {
	Workload string
	Location string
	Ready    float64
	Desired  float64
}

func readyShares(ctx context.Context, q report.Querier, since, until time.Time) ([]readyShare, error) {
	res, err := report.Availability(ctx, q, report.AvailabilityOptions{Options: report.Options{
		Window: report.Window{Since: since, Until: until}, By: []report.Dim{report.Workload, report.Location}, Now: until}})
	if err != nil {
		return nil, err
	}
	out := make([]readyShare, 0, len(res.Rows))
	for _, r := range res.Rows {
		out = append(out, readyShare{Workload: str(r["workload"]), Location: str(r["location"]),
			Ready: num(r["ready_replica_h"]), Desired: num(r["desired_replica_h"])})
	}
	return out, nil
}

// availableByWorkload is each workload's availability from `report availability --by workload`,
// by target: the report's default (desired) and the fleet's minimum (--target min), each under the
// report's own column name.
func availableByWorkload(ctx context.Context, q report.Querier, cfg *fleet.Config, since, until time.Time) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	for _, target := range availabilityTargets {
		res, err := report.Availability(ctx, q, report.AvailabilityOptions{Target: target, Options: report.Options{
			Window: report.Window{Since: since, Until: until}, By: []report.Dim{report.Workload}, Now: until, Fleet: cfg}})
		if err != nil {
			return nil, err
		}
		col := report.AvailableColumn(target)
		out[col] = make(map[string]float64, len(res.Rows))
		for _, r := range res.Rows {
			out[col][str(r["workload"])] = num(r[col])
		}
	}
	return out, nil
}

// availabilityTargets are the targets the demo's per workload table shows: the report's default first.
var availabilityTargets = []string{"", "min"}

// readySample is a workload's ready replicas at one trace tick.
type readySample struct {
	Workload string
	AtMS     int64
	Ready    int64
}

// readySamples samples each workload's ready replicas (summed over its locations and markets)
// at every trace tick from its first replica.state report to until.
func readySamples(ctx context.Context, q report.Querier, since, until time.Time) ([]readySample, error) {
	steps, err := report.ReadySteps(ctx, q, report.AvailabilityOptions{Options: report.Options{
		Window: report.Window{Since: since, Until: until}, By: []report.Dim{report.Workload}, Now: until}})
	if err != nil {
		return nil, err
	}
	var out []readySample
	for i := 0; i < len(steps); {
		j := i + 1
		for j < len(steps) && steps[j].Group[0] == steps[i].Group[0] {
			j++
		}
		k := i
		for t := steps[i].At; t.Before(until); t = t.Add(traceTick) {
			for k+1 < j && !steps[k+1].At.After(t) {
				k++
			}
			out = append(out, readySample{Workload: steps[i].Group[0], AtMS: t.UnixMilli(), Ready: steps[k].Ready})
		}
		i = j
	}
	return out, nil
}
