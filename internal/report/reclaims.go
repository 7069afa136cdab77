package report

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// reclaim is one capacity.reclaimed notice, with what ran where it struck.
type reclaim struct {
	Provider string `json:"provider"`
	Region   string `json:"region"`
	Location string `json:"location"`
	Zone     string `json:"zone"`
	Kind     string `json:"kind"`
	NoticeMS int64  `json:"notice_ms"`
	Deadline int64  `json:"deadline_ms"`
	// What ran there at the notice (see candidates): the workloads, markets and GPU models,
	// each sorted and joined with "+" where more than one could have been hit.
	workloads []string
	market    string
	gpu       string
	// toReady is the milliseconds from the notice to its replacement ready, or -1.
	toReady int64
}

// Unknown is the GPU model (or workload) of a reclaim where nothing was recorded running.
const Unknown = "unknown"

// reclaimDetail are the columns of `report reclaims` without --by.
var reclaimDetail = []string{"provider", "location", "zone", "gpu", "kind"}

// Reclaims is `report reclaims`: capacity.reclaimed notices by provider, location, zone, GPU
// model and kind (or by the --by dimensions), the notice they gave, how soon a replacement
// replica was ready, how long launches took from the capacity request to a ready replica (the
// "time to first GPU"), and the launches given up for want of capacity (rows of kind
// launch_failed, or a column with --by): capacity lost before it came, beside capacity taken back. A notice names an instance, not what ran on it, so the workload and
// GPU model come from replica.state: the groups running at the notice's location and zone at
// the notice time.
func Reclaims(ctx context.Context, q Querier, o Options) (*Result, error) {
	rs, err := queryRows[reclaim](ctx, q, fmt.Sprintf(`SELECT provider, region, location, zone, kind,
		toUnixTimestamp64Milli(notice_at) AS notice_ms, toUnixTimestamp64Milli(deadline) AS deadline_ms
		FROM (SELECT * FROM %s WHERE notice_at >= %s AND notice_at < %s AND %s ORDER BY id LIMIT 1 BY id)
		ORDER BY notice_at, id`,
		q.Table("capacity_reclaimed"), ms64(o.Window.Since), ms64(o.Window.Until),
		where(o.Filter, map[Dim]string{Provider: "provider", Location: "location", Region: "region"})))
	if err != nil {
		return nil, fmt.Errorf("reading reclaims: %w", err)
	}
	// Replacements and launches that finish after the window still count for what started in it.
	end := o.Window.Until.Add(24 * time.Hour)
	if !o.Now.IsZero() && o.Now.Before(end) {
		end = o.Now
	}
	states, err := fleetStates(ctx, q, nil, o.Window.Since, end)
	if err != nil {
		return nil, err
	}
	groups := byGroup(states)
	for i := range rs {
		rs[i].candidates(groups)
	}
	matchReplacements(rs, arrivals(states))
	launches, err := firstGPUs(ctx, q, o, end, groups)
	if err != nil {
		return nil, err
	}
	fails, err := launchFailures(ctx, q, o, o.Window.Since, o.Window.Until, groups)
	if err != nil {
		return nil, err
	}
	rs = slices.DeleteFunc(rs, func(r reclaim) bool {
		return !o.Filter.keepAny(GPU, r.gpu) || !o.Filter.keepAny(Workload, r.value("workload", o)) ||
			!o.Filter.keepAny(Market, r.market)
	})
	return reclaimResult(rs, launches, fails, o), nil
}

// candidates finds what the reclaim could have struck: the groups at its location whose
// replicas were ready at the notice on an offer in its zone (offers and notices without a zone
// match any zone), preferring spot groups, since only spot and preemptible capacity is
// reclaimed; their workloads and GPU models become the reclaim's. replica.state is a report
// every so often, so a group that showed nothing ready at the notice counts when its first
// report after the notice, before the deadline, shows replicas ready.
func (r *reclaim) candidates(groups map[fleetGroup][]groupState) {
	var hits []groupState
	for g, states := range groups {
		if g.Location != r.Location {
			continue
		}
		s, ok := stateAt(states, r.NoticeMS)
		if !ok || s.Ready <= 0 {
			// A replica that became ready just before the notice shows in the next report.
			if s, ok = nextState(states, r.NoticeMS); !ok || s.AtMS > r.Deadline || s.Ready <= 0 {
				continue
			}
		}
		hit := groupState{fleetGroup: g}
		for i, offer := range s.Offers {
			if z := zoneOf(offer); s.Readys[i] > 0 && (z == "" || r.Zone == "" || z == r.Zone) {
				hit.GPUs = append(hit.GPUs, s.GPUs[i])
			}
		}
		if len(hit.GPUs) > 0 {
			hits = append(hits, hit)
		}
	}
	if slices.ContainsFunc(hits, func(h groupState) bool { return h.Market == "spot" }) {
		hits = slices.DeleteFunc(hits, func(h groupState) bool { return h.Market != "spot" })
	}
	var gpus, markets []string
	for _, h := range hits {
		r.workloads = append(r.workloads, h.Workload)
		markets = append(markets, h.Market)
		for _, m := range h.GPUs {
			if m == "" {
				m = Unknown
			}
			gpus = append(gpus, m)
		}
	}
	r.workloads, r.market, r.gpu = uniq(r.workloads), strings.Join(uniq(markets), "+"), strings.Join(uniq(gpus), "+")
	if r.gpu == "" {
		r.gpu = Unknown
	}
	if r.market == "" {
		r.market = Unknown
	}
}

// keepAny is keep for a value that may join several with "+" (a reclaim that could have struck
// more than one GPU model or workload): it passes when any of them does.
func (f Filter) keepAny(d Dim, joined string) bool {
	return slices.ContainsFunc(strings.Split(joined, "+"), func(v string) bool { return f.keep(d, v) })
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// matchReplacements sets each reclaim's time to replacement. Reclaims, in notice order, each
// take one replica of the earliest arrival, at or after the notice, of ready replicas of a
// workload the reclaim could have struck (at any location or market) that no earlier reclaim
// took. So two reclaims answered by one launch of two replicas are both replaced, and a launch
// for something else that happens to come later is taken only when nothing earlier came.
func matchReplacements(rs []reclaim, as []arrival) {
	left := make([]int64, len(as))
	for i, a := range as {
		left[i] = a.N
	}
	for i := range rs {
		r := &rs[i]
		r.toReady = -1
		for j, a := range as {
			if left[j] > 0 && a.AtMS >= r.NoticeMS && slices.Contains(r.workloads, a.Workload) {
				left[j]--
				r.toReady = a.AtMS - r.NoticeMS
				break
			}
		}
	}
}

// reclaimAgg sums the reclaims of one row.
type reclaimAgg struct {
	values                  []string
	n, replaced, byDeadline int
	notice, toReplace       time.Duration
	toReplaceAll            []time.Duration
	launches                int
	toFirstGPU              time.Duration
	failed                  int
}

func (r reclaim) value(col string, o Options) string {
	switch col {
	case "provider":
		return r.Provider
	case "location":
		return r.Location
	case "zone":
		return r.Zone
	case "gpu":
		return r.gpu
	case "kind":
		return r.Kind
	case "workload":
		if len(r.workloads) == 0 {
			return Unknown
		}
		return strings.Join(r.workloads, "+")
	case "market":
		return r.market
	case "region":
		if r.Region != "" {
			return r.Region
		}
		return o.region(r.Location)
	}
	return ""
}

// reclaimResult groups the reclaims, the launches and the launches given up into rows.
func reclaimResult(rs []reclaim, launches []launch, fails []launchFailure, o Options) *Result {
	cols := reclaimDetail
	if len(o.By) > 0 {
		cols = byColumns(o.By)
	}
	aggs := map[string]*reclaimAgg{}
	get := func(values []string) *reclaimAgg {
		k := strings.Join(values, "\x00")
		a := aggs[k]
		if a == nil {
			a = &reclaimAgg{values: values}
			aggs[k] = a
		}
		return a
	}
	for _, r := range rs {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = r.value(c, o)
		}
		a := get(vals)
		a.n++
		a.notice += time.Duration(r.Deadline-r.NoticeMS) * time.Millisecond
		if r.toReady >= 0 {
			d := time.Duration(r.toReady) * time.Millisecond
			a.replaced++
			a.toReplace += d
			a.toReplaceAll = append(a.toReplaceAll, d)
			if r.NoticeMS+r.toReady <= r.Deadline {
				a.byDeadline++
			}
		}
	}
	// Launches join the rows they share dimensions with; zone and kind are not theirs. With --by,
	// a row is made for launches where nothing was reclaimed.
	for _, l := range launches {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = l.value(c, o)
		}
		k := strings.Join(vals, "\x00")
		if len(o.By) == 0 {
			for _, a := range aggs {
				if launchMatches(a.values, vals, cols) {
					a.launches++
					a.toFirstGPU += l.toReady
				}
			}
			continue
		}
		a := aggs[k]
		if a == nil {
			a = get(vals)
		}
		a.launches++
		a.toFirstGPU += l.toReady
	}
	// A failure is a row of its own kind (launch_failed) in the detail, and joins its row with --by.
	for _, f := range fails {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = f.value(c, o)
		}
		get(vals).failed++
	}
	res := &Result{Title: "Reclaims, " + o.Window.String(),
		Columns: append(slices.Clone(cols), "reclaims", "avg_notice_s", "replaced", "replaced_by_deadline",
			"avg_to_replacement_s", "median_to_replacement_s", "launches", "avg_to_first_gpu_s", "launches_failed")}
	keys := make([]string, 0, len(aggs))
	for k := range aggs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := aggs[k]
		row := cli.Row{}
		for i, c := range cols {
			row[c] = a.values[i]
		}
		row["reclaims"], row["replaced"], row["replaced_by_deadline"] = a.n, a.replaced, a.byDeadline
		row["avg_notice_s"] = round(ratio(a.notice.Seconds(), float64(a.n)), 1)
		row["avg_to_replacement_s"] = round(ratio(a.toReplace.Seconds(), float64(a.replaced)), 1)
		row["median_to_replacement_s"] = round(median(a.toReplaceAll).Seconds(), 1)
		row["launches"] = a.launches
		row["avg_to_first_gpu_s"] = round(ratio(a.toFirstGPU.Seconds(), float64(a.launches)), 1)
		row["launches_failed"] = a.failed
		res.Rows = append(res.Rows, row)
	}
	shown := "column launches_failed"
	if len(o.By) == 0 {
		shown = "rows of kind " + KindLaunchFailed
	}
	res.Notes = append(append(firstGPUNotes(launches), unreplacedNote(rs)...), failureNote(fails, shown)...)
	return res
}

// launchMatches says whether a launch with values (zone and kind empty) belongs to a detail row.
func launchMatches(row, launch []string, cols []string) bool {
	for i, c := range cols {
		if c != "zone" && c != "kind" && row[i] != launch[i] {
			return false
		}
	}
	return true
}

// median is the middle duration (the mean of the middle two), 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func unreplacedNote(rs []reclaim) []string {
	unknown, open := 0, 0
	for _, r := range rs {
		if len(r.workloads) == 0 {
			unknown++
		} else if r.toReady < 0 {
			open++
		}
	}
	var out []string
	if unknown > 0 {
		out = append(out, fmt.Sprintf("%d reclaims struck where replica.state shows nothing ready at the notice: GPU %s, not matched to a replacement", unknown, Unknown))
	}
	if open > 0 {
		out = append(out, fmt.Sprintf("%d reclaims had no replacement ready by the report's end", open))
	}
	return out
}
