package report

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// CapacityTarget is the --target that measures availability in the workload's own metric: a
// minute counts as available when its ready replicas, each at its GPU type's rate, could serve
// the minute's demand (SERVING.md's capacity-availability), rather than when enough replicas
// were ready.
const CapacityTarget = "capacity"

// minuteMS is the grid capacity-availability is counted on: the availability target is a percent
// of minutes, and the token scraper's 30 s interval gives every minute its own counter increases.
const minuteMS = int64(time.Minute / time.Millisecond)

// capacityStep is a workload's ready capacity, in its metric's unit per second, from AtMS until
// its next step.
type capacityStep struct {
	AtMS   int64
	PerSec float64
}

// capacityTally is what a workload's minutes add up to.
type capacityTally struct {
	Observed, Short  int
	Demand, Unserved float64 // in the metric's unit (tokens or requests), not per second
}

// tallyMinutes counts the whole minutes of [from, to) (minute-aligned, unix ms) from the first
// step on: a minute is short when its demand (what was served in it, by the counters) exceeds
// what its ready capacity could serve in it, the capacity's integral over the minute, so a
// replica ready for half a minute counts for half. A minute with no demand is never short. Time
// before the first step is not observed: nothing says what was ready then.
func tallyMinutes(steps []capacityStep, demand map[int64]float64, from, to int64) capacityTally {
	var t capacityTally
	if len(steps) == 0 {
		return t
	}
	start := max(from, ceilMinute(steps[0].AtMS))
	i := 0
	for m := start; m+minuteMS <= to; m += minuteMS {
		for i+1 < len(steps) && steps[i+1].AtMS <= m {
			i++
		}
		served := 0.0 // what the ready capacity could serve in the minute
		for j, at := i, m; at < m+minuteMS; j++ {
			until := m + minuteMS
			if j+1 < len(steps) {
				until = min(until, steps[j+1].AtMS)
			}
			served += steps[j].PerSec * float64(until-at) / 1000
			at = until
		}
		d := demand[m]
		t.Observed++
		t.Demand += d
		if d > served {
			t.Short++
			t.Unserved += d - served
		}
	}
	return t
}

// ceilMinute is ms rounded up to a whole minute.
func ceilMinute(ms int64) int64 {
	if r := ms % minuteMS; r != 0 {
		return ms - r + minuteMS
	}
	return ms
}

// checkCapacity refuses what --target capacity cannot answer.
func (o AvailabilityOptions) checkCapacity() error {
	if o.Fleet == nil {
		return fmt.Errorf("--target capacity: the workloads' rates per GPU model and availability targets come from the fleet file: give --fleet")
	}
	if !slices.Equal(o.By, []Dim{Workload}) {
		return fmt.Errorf("--target capacity compares a workload's demand with its capacity over all its locations: use it with --by workload")
	}
	for _, d := range []Dim{Provider, Market, GPU} {
		if len(o.Filter[d]) > 0 {
			return fmt.Errorf("--target capacity: token counters carry no %s, so demand cannot be split by it; filter by workload, location, region or team", d)
		}
	}
	return nil
}

// demandMinute is what one workload served at one location in one minute, by its counters.
type demandMinute struct {
	Workload string `json:"workload"`
	Location string `json:"location"`
	MinuteMS int64  `json:"minute_ms"`
	Prompt   int64  `json:"prompt"`
	Gen      int64  `json:"gen"`
	Requests int64  `json:"requests"`
}

// in is the part of the counters w's scaling metric measures.
func (d demandMinute) in(w *fleet.Workload) float64 {
	switch w.Scaling.Metric {
	case fleet.MetricOutputTokens:
		return float64(d.Gen)
	case fleet.MetricRequests:
		return float64(d.Requests)
	}
	return float64(d.Prompt + d.Gen)
}

// loadDemand sums the counters' increases by workload, location and minute in ClickHouse, so a
// month comes back as at most one row per workload, location and minute. The recorder stores each
// sample's increase over the replica's previous one (a restarted server's counter counts from
// zero, a redelivered sample adds nothing), so the sum is what was served; an increase counts in
// the minute of the sample that reports it, at most one scrape interval after it was served.
func loadDemand(ctx context.Context, q Querier, o AvailabilityOptions, from, to int64) ([]demandMinute, error) {
	rows, err := queryRows[demandMinute](ctx, q, fmt.Sprintf(`SELECT workload, location,
		intDiv(toUnixTimestamp64Milli(at), %[1]d) * %[1]d AS minute_ms, toInt64(sum(delta_prompt_tokens)) AS prompt,
		toInt64(sum(delta_generation_tokens)) AS gen, toInt64(sum(delta_requests)) AS requests
		FROM %[2]s WHERE at >= %[3]s AND at < %[4]s AND %[5]s GROUP BY workload, location, minute_ms`,
		minuteMS, q.Table("tokens_sample"), ms64(time.UnixMilli(from)), ms64(time.UnixMilli(to)), where(o.Filter, tokenCols)))
	if err != nil {
		return nil, fmt.Errorf("reading token counters by minute: %w", err)
	}
	return rows, nil
}

// keeps says whether a workload's row at a location passes the region and team filters.
func (o AvailabilityOptions) keeps(workload, location string) bool {
	return o.Filter.keep(Region, o.region(location)) && o.Filter.keep(Team, o.team(workload))
}

// capacitySteps sums each rated workload's groups into its capacity steps: a group's capacity is
// its ready replicas on each offer times the rate of the offer's GPU model, and holds until the
// group's next report. Ready replicas on a model the workload states no rate for serve nothing
// here; unrated names them, by workload.
func capacitySteps(states []groupState, o AvailabilityOptions, from int64) (steps map[string][]capacityStep, unrated map[string][]string) {
	steps, unrated = map[string][]capacityStep{}, map[string][]string{}
	cur := map[fleetGroup]float64{}
	for _, s := range states {
		w, ok := o.Fleet.Workload(s.Workload)
		if !ok || w.Rates() == nil || !o.keeps(s.Workload, s.Location) {
			continue
		}
		c := 0.0
		for j, gpu := range s.GPUs {
			r, ok := w.RateFor(gpu)
			if !ok && s.Readys[j] > 0 && !slices.Contains(unrated[s.Workload], gpu) {
				unrated[s.Workload] = append(unrated[s.Workload], gpu)
			}
			c += float64(s.Readys[j]) * r
		}
		cur[s.fleetGroup] = c
		total := 0.0
		for g, v := range cur {
			if g.Workload == s.Workload {
				total += v
			}
		}
		at := max(s.AtMS, from)
		if n := len(steps[s.Workload]); n > 0 && steps[s.Workload][n-1].AtMS == at {
			steps[s.Workload][n-1].PerSec = total // another group's report at the same instant
			continue
		}
		steps[s.Workload] = append(steps[s.Workload], capacityStep{at, total})
	}
	return steps, unrated
}

// capacityAvailability is `report availability --target capacity`: per workload sized by
// throughput with rates in the fleet file, the share of the observed minutes whose ready capacity
// could serve their demand, the demand it could not serve, and the workload's availability target
// beside what it achieved.
func capacityAvailability(ctx context.Context, q Querier, o AvailabilityOptions) (*Result, error) {
	if err := o.checkCapacity(); err != nil {
		return nil, err
	}
	// Whole minutes only: the first that starts in the window to the last that ends by its end
	// (or now).
	from, to := ceilMinute(o.Window.Since.UnixMilli()), o.end().UnixMilli()/minuteMS*minuteMS
	if from >= to {
		return nil, fmt.Errorf("--target capacity: the window %s holds no whole minute", o.Window)
	}
	states, err := fleetStates(ctx, q, o.Filter, time.UnixMilli(from), time.UnixMilli(to))
	if err != nil {
		return nil, err
	}
	ds, err := loadDemand(ctx, q, o, from, to)
	if err != nil {
		return nil, err
	}
	demand := map[string]map[int64]float64{}
	for _, d := range ds {
		w, ok := o.Fleet.Workload(d.Workload)
		if !ok || !o.keeps(d.Workload, d.Location) {
			continue
		}
		if demand[d.Workload] == nil {
			demand[d.Workload] = map[int64]float64{}
		}
		demand[d.Workload][d.MinuteMS] += d.in(w)
	}
	steps, unrated := capacitySteps(states, o, from)
	res := &Result{Title: "Capacity availability, " + o.Window.String(),
		Columns: []string{string(Workload), "observed_min", "short_min", AvailableColumn(CapacityTarget), "unserved_pct",
			"availability_target_pct", "target_met"},
		Notes: []string{AvailableColumn(CapacityTarget) + ": share of the observed minutes whose ready replicas, each at its GPU type's rate " +
			"(serving.per_replica), could serve the minute's demand (the workload's counters: tokens, output tokens or requests, " +
			"as its scaling.metric); a minute with no demand is available; unserved_pct is the demand beyond capacity over all demand; " +
			"time before a workload's first replica.state report is not observed"}}
	for _, name := range slices.Sorted(maps.Keys(steps)) {
		w, _ := o.Fleet.Workload(name)
		res.Rows = append(res.Rows, capacityRow(w, tallyMinutes(steps[name], demand[name], from, to)))
		if gpus := unrated[name]; len(gpus) > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: ready replicas on %s count as serving nothing: the fleet file states no rate for them",
				name, strings.Join(gpus, ", ")))
		}
	}
	res.Notes = append(res.Notes, skippedNote(o, steps)...)
	return res, nil
}

// capacityRow is one workload's row: its target is met when the available share reaches it.
func capacityRow(w *fleet.Workload, t capacityTally) cli.Row {
	pct := 100 * ratio(float64(t.Observed-t.Short), float64(t.Observed))
	r := cli.Row{string(Workload): w.Name, "observed_min": t.Observed, "short_min": t.Short,
		AvailableColumn(CapacityTarget): round(pct, 2), "unserved_pct": round(100*ratio(t.Unserved, t.Demand), 3),
		"availability_target_pct": nil, "target_met": "-"} // nil: an empty cell, null in JSON
	if target, ok := w.AvailabilityTarget(); ok {
		r["availability_target_pct"] = target
		if t.Observed > 0 {
			r["target_met"] = map[bool]string{true: "yes", false: "no"}[pct >= target]
		}
	}
	return r
}

// skippedNote names the workloads of the fleet file (those the filters keep) that have no row:
// not sized by throughput, or no replica.state report.
func skippedNote(o AvailabilityOptions, rows map[string][]capacityStep) []string {
	var unsized, unseen []string
	for _, w := range o.Fleet.Workloads {
		if !o.Filter.keep(Workload, w.Name) || !o.Filter.keep(Team, w.Team) {
			continue
		}
		switch {
		case w.Rates() == nil:
			unsized = append(unsized, w.Name)
		case rows[w.Name] == nil:
			unseen = append(unseen, w.Name)
		}
	}
	var out []string
	if len(unsized) > 0 {
		out = append(out, "not sized by throughput (no scaling.metric in tokens or requests with rates per replica), so not in the report: "+
			strings.Join(unsized, ", "))
	}
	if len(unseen) > 0 {
		out = append(out, "no replica.state report by the window's end, so not observed: "+strings.Join(unseen, ", "))
	}
	return out
}
