package report

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// AvailabilityOptions are `report availability`'s.
type AvailabilityOptions struct {
	Options
	// Target is how many ready replicas a group must have to count as up: "" or "desired" (what
	// replica.state says was asked for), "min" (the fleet file's replicas.min of the workload;
	// by workload only), "capacity" (ready capacity against demand in the workload's metric, by
	// the fleet file's rates; by workload only, see capacity.go), or a whole number.
	Target string
}

// ReadyStep is a group's ready, desired and target replicas from At until the group's next
// step (or the end of the window).
type ReadyStep struct {
	Group                  []string // the values of the --by dimensions
	At                     time.Time
	Ready, Desired, Target int64
}

// end is where availability stops counting: the window's end, or the report's time if sooner.
func (o AvailabilityOptions) end() time.Time {
	if !o.Now.IsZero() && o.Now.Before(o.Window.Until) {
		return o.Now
	}
	return o.Window.Until
}

// AvailableColumn is the name of the availability column for a --target: the target is in the
// header (available_pct_of_desired, available_pct_of_min, available_pct_of_2), so a figure is
// never read with another meaning than the one it has. The default target is desired.
func AvailableColumn(target string) string {
	if target == "" {
		target = "desired"
	}
	return "available_pct_of_" + target
}

// target returns the fixed target, or -1 for desired, or -2 for the workload's minimum.
func (o AvailabilityOptions) target() (int64, error) {
	switch o.Target {
	case "", "desired":
		return -1, nil
	case "min":
		if o.Fleet == nil {
			return 0, fmt.Errorf("--target min: the workloads' minimum replicas come from the fleet file: give --fleet")
		}
		if !slices.Equal(o.By, []Dim{Workload}) {
			return 0, fmt.Errorf("--target min is a workload's minimum over all its locations: use it with --by workload")
		}
		return -2, nil
	case CapacityTarget:
		return 0, fmt.Errorf("--target capacity is counted in minutes of demand, not in ready replicas: it has no steps")
	}
	n, err := strconv.ParseInt(o.Target, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--target %q: want desired, min, capacity or a number of replicas", o.Target)
	}
	return n, nil
}

// ReadySteps returns, for each group of the --by dimensions (workload, location, provider,
// region, market), its ready and desired replicas over the window as steps: the sums over the
// group's replica groups of each one's latest replica.state report, from the window's start (or
// the first report) to its end or the report's time. The demo plots and samples these, and
// Availability integrates them.
func ReadySteps(ctx context.Context, q Querier, o AvailabilityOptions) ([]ReadyStep, error) {
	steps, _, err := readySteps(ctx, q, o)
	return steps, err
}

// readySteps is ReadySteps, with the group states the steps were made of.
func readySteps(ctx context.Context, q Querier, o AvailabilityOptions) ([]ReadyStep, []groupState, error) {
	if slices.Contains(o.By, GPU) || len(o.Filter[GPU]) > 0 {
		return nil, nil, fmt.Errorf("gpu: availability is by workload, location, provider, region or market, not by GPU model")
	}
	fixed, err := o.target()
	if err != nil {
		return nil, nil, err
	}
	states, err := fleetStates(ctx, q, o.Filter, o.Window.Since, o.end())
	if err != nil {
		return nil, nil, err
	}
	keys := map[fleetGroup][]string{}
	members := map[string][]groupState{}
	var order []string
	for _, s := range states {
		vals, ok := keys[s.fleetGroup]
		if !ok {
			vals = availabilityKey(s, o.Options)
			keys[s.fleetGroup] = vals
		}
		if vals == nil {
			continue
		}
		k := strings.Join(vals, "\x00")
		if _, seen := members[k]; !seen {
			order = append(order, k)
		}
		members[k] = append(members[k], s)
	}
	slices.Sort(order)
	var out []ReadyStep
	for _, k := range order {
		ms := members[k]
		out = append(out, sweep(keys[ms[0].fleetGroup], ms, o, fixed)...)
	}
	return out, states, nil
}

// availabilityKey is the group's --by values, or nil when the region filter drops it.
func availabilityKey(s groupState, o Options) []string {
	provider := s.Provider
	if provider == "" {
		provider = o.provider(s.Location)
	}
	if !o.Filter.keep(Region, o.region(s.Location)) || !o.Filter.keep(Team, o.team(s.Workload)) {
		return nil
	}
	vals := make([]string, len(o.By))
	for i, d := range o.By {
		vals[i] = Key{Workload: s.Workload, Location: s.Location, Provider: provider, Market: s.Market}.dim(d, o)
	}
	return vals
}

// sweep turns the states of one group's members (in time order) into its steps.
func sweep(vals []string, states []groupState, o AvailabilityOptions, fixed int64) []ReadyStep {
	since := o.Window.Since.UnixMilli()
	cur := map[fleetGroup]groupState{}
	var out []ReadyStep
	for i, s := range states {
		cur[s.fleetGroup] = s
		if i+1 < len(states) && max(states[i+1].AtMS, since) == max(s.AtMS, since) {
			continue // more reports at the same instant
		}
		st := ReadyStep{Group: vals, At: time.UnixMilli(max(s.AtMS, since)).UTC()}
		for _, c := range cur {
			st.Ready += c.Ready
			st.Desired += c.Desired
		}
		switch fixed {
		case -1:
			st.Target = st.Desired
		case -2:
			if w, ok := o.Fleet.Workload(s.Workload); ok {
				st.Target = int64(w.Replicas.Min)
			}
		default:
			st.Target = fixed
		}
		if n := len(out); n > 0 && out[n-1].Ready == st.Ready && out[n-1].Desired == st.Desired && out[n-1].Target == st.Target {
			continue
		}
		out = append(out, st)
	}
	return out
}

// Availability is `report availability`: per group of the --by dimensions, the share of the
// observed time it had at least its target of ready replicas, the minutes below it, the
// outages (stretches below it), the ready replica-hours against the desired ones, and the
// launches given up for want of capacity (a shortfall's usual cause). Time before a group's first
// replica.state report is not observed, so it is neither up nor down. --target capacity counts
// minutes of demand served instead (capacityAvailability).
func Availability(ctx context.Context, q Querier, o AvailabilityOptions) (*Result, error) {
	if o.Target == CapacityTarget {
		return capacityAvailability(ctx, q, o)
	}
	steps, states, err := readySteps(ctx, q, o)
	if err != nil {
		return nil, err
	}
	fails, err := launchFailures(ctx, q, o.Options, o.Window.Since, o.end(), byGroup(states))
	if err != nil {
		return nil, err
	}
	failed := failuresBy(fails, o.Options)
	target := map[string]string{"": "the desired replicas in replica.state", "desired": "the desired replicas in replica.state",
		"min": "the workload's replicas.min in the fleet file"}[o.Target]
	if target == "" {
		target = o.Target + " ready replicas"
	}
	res := &Result{Title: "Availability, " + o.Window.String(),
		Columns: append(byColumns(o.By), "observed_h", AvailableColumn(o.Target), "downtime_min", "outages", "ready_replica_h",
			"desired_replica_h", "ready_share", "launches_failed"),
		Notes: []string{AvailableColumn(o.Target) + ": share of the observed time with at least the target ready, the target being " + target +
			"; an outage is a stretch below it; time before a group's first report is not observed"}}
	end := o.end()
	for i := 0; i < len(steps); {
		j := i + 1
		for j < len(steps) && slices.Equal(steps[j].Group, steps[i].Group) {
			j++
		}
		row := availabilityRow(o.By, steps[i:j], end)
		row[AvailableColumn(o.Target)] = row["available_pct"]
		delete(row, "available_pct")
		k := strings.Join(steps[i].Group, "\x00")
		row["launches_failed"] = failed[k]
		delete(failed, k)
		res.Rows = append(res.Rows, row)
		i = j
	}
	res.Notes = append(res.Notes, failureNote(fails, "column launches_failed")...)
	if n := sumValues(failed); n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d of them in groups with no replica.state report in the window, so in no row", n))
	}
	return res, nil
}

// failuresBy counts the launch failures per group of the --by dimensions (their values joined).
func failuresBy(fs []launchFailure, o Options) map[string]int {
	out := map[string]int{}
	for _, f := range fs {
		vals := make([]string, len(o.By))
		for i, d := range o.By {
			vals[i] = Key{Workload: f.Workload, Location: f.Location, Provider: f.provider, Market: f.Market}.dim(d, o)
		}
		out[strings.Join(vals, "\x00")]++
	}
	return out
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// availabilityRow integrates one group's steps up to end.
func availabilityRow(by []Dim, steps []ReadyStep, end time.Time) cli.Row {
	var observed, down time.Duration
	var readyH, desiredH float64
	outages := 0
	for i, s := range steps {
		until := end
		if i+1 < len(steps) {
			until = steps[i+1].At
		}
		d := until.Sub(s.At)
		if d <= 0 {
			continue
		}
		observed += d
		readyH += float64(s.Ready) * d.Hours()
		desiredH += float64(s.Desired) * d.Hours()
		if s.Ready < s.Target {
			down += d
			if i == 0 || steps[i-1].Ready >= steps[i-1].Target {
				outages++
			}
		}
	}
	r := dimsRow(by, steps[0].Group)
	r["observed_h"] = round(observed.Hours(), 3)
	r["available_pct"] = round(100*ratio((observed-down).Seconds(), observed.Seconds()), 2)
	r["downtime_min"] = round(down.Minutes(), 2)
	r["outages"] = outages
	r["ready_replica_h"] = round(readyH, 3)
	r["desired_replica_h"] = round(desiredH, 3)
	r["ready_share"] = round(ratio(readyH, desiredH), 4)
	return r
}
