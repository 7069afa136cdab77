package report

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Key is what a replica's spend is recorded by.
type Key struct {
	Workload, Location, Provider, Market, GPU string
}

// dim returns the key's value of a dimension; region comes from the fleet file.
func (k Key) dim(d Dim, o Options) string {
	switch d {
	case Workload:
		return k.Workload
	case Location:
		return k.Location
	case Provider:
		return k.Provider
	case Region:
		return o.region(k.Location)
	case Market:
		return k.Market
	case GPU:
		return k.GPU
	case Team:
		return o.team(k.Workload)
	}
	return ""
}

// Usage is what one key ran and cost in one step of time (an hour or a day) starting at Hour.
type Usage struct {
	Key
	Hour         time.Time
	USD          float64
	GPUHours     float64
	ReplicaHours float64
	// Billed is set when USD is billed cost (Options.Basis billed), not the estimate.
	Billed bool
}

// costCols are the columns of the cost rollup and replica_state that hold each dimension.
var costCols = map[Dim]string{Workload: "workload", Location: "location", Provider: "provider", Market: "market", GPU: "gpu_model"}

// loadUsage returns the exact spend in the window by key and hour: whole hours from the cost
// rollup, the parts of hours at the window's edges from the intervals in replica_state, and the
// interval each series has had open since its latest sample, up to the fleet's latest report
// (lastHeard), never past Now. Usage is summed in steps
// of step (an hour or a day): the rollup is summed to that step in the query, so a month of hourly
// rows is not sent back to be added up here.
func loadUsage(ctx context.Context, q Querier, o Options, step time.Duration) ([]Usage, error) {
	return loadUsageOf(ctx, q, o, step, allCols)
}

// loadUsageOf is loadUsage with only the key fields in cols: usage is summed over the others,
// in the query where it can be, and they are left empty.
func loadUsageOf(ctx context.Context, q Querier, o Options, step time.Duration, cols keyCols) ([]Usage, error) {
	acc := &usageAcc{m: map[usageKey]*Usage{}, step: step, cols: cols}
	w := o.Window
	lo, hi := hourCeil(w.Since), hourFloor(w.Until)
	var edges [][2]time.Time
	if lo.After(hi) { // the window lies inside one hour
		edges = append(edges, [2]time.Time{w.Since, w.Until})
	} else {
		if err := rollupUsage(ctx, q, o, lo, hi, acc); err != nil {
			return nil, err
		}
		if w.Since.Before(lo) {
			edges = append(edges, [2]time.Time{w.Since, lo})
		}
		if hi.Before(w.Until) {
			edges = append(edges, [2]time.Time{hi, w.Until})
		}
	}
	for _, e := range edges {
		if err := edgeUsage(ctx, q, o, e[0], e[1], acc); err != nil {
			return nil, err
		}
	}
	if err := openUsage(ctx, q, o, acc); err != nil {
		return nil, err
	}
	out := make([]Usage, 0, len(acc.m))
	for _, u := range acc.m {
		if o.Filter.keep(Region, o.region(u.Location)) && o.Filter.keep(Team, o.team(u.Workload)) {
			out = append(out, *u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Hour.Equal(out[j].Hour) {
			return out[i].Hour.Before(out[j].Hour)
		}
		return keyLess(out[i].Key, out[j].Key)
	})
	return out, nil
}

type usageKey struct {
	Key
	hour int64
}

// keyLess orders keys field by field (a sort of a month of usage calls it millions of times, so
// it builds no strings).
func keyLess(a, b Key) bool {
	return cmp.Or(strings.Compare(a.Workload, b.Workload), strings.Compare(a.Location, b.Location),
		strings.Compare(a.Provider, b.Provider), strings.Compare(a.Market, b.Market), strings.Compare(a.GPU, b.GPU)) < 0
}

func (u *Usage) add(usd, gpuHours, replicaHours float64) {
	u.USD += usd
	u.GPUHours += gpuHours
	u.ReplicaHours += replicaHours
}

// usageAcc sums usage by key (its fields in cols) and step.
type usageAcc struct {
	m    map[usageKey]*Usage
	step time.Duration
	cols keyCols
}

func (a *usageAcc) slot(k Key, t time.Time) *Usage {
	k = a.cols.project(k)
	t = t.UTC().Truncate(a.step)
	uk := usageKey{k, t.Unix()}
	u := a.m[uk]
	if u == nil {
		u = &Usage{Key: k, Hour: t}
		a.m[uk] = u
	}
	return u
}

type keyRow struct {
	Workload string `json:"workload"`
	Location string `json:"location"`
	Provider string `json:"provider"`
	Market   string `json:"market"`
	GPU      string `json:"gpu"`
}

func (r keyRow) key() Key { return Key{r.Workload, r.Location, r.Provider, r.Market, r.GPU} }

func rollupUsage(ctx context.Context, q Querier, o Options, lo, hi time.Time, acc *usageAcc) error {
	sel, group := acc.cols.selectKey()
	out, err := q.Query(ctx, fmt.Sprintf(`SELECT %s
		intDiv(toUnixTimestamp(hour), %d) * %d AS step, sum(usd) AS usd, sum(gpu_hours) AS gpu_hours,
		sum(replica_hours) AS replica_hours
		FROM %s WHERE hour >= %s AND hour < %s AND %s
		%s`,
		sel, int64(acc.step.Seconds()), int64(acc.step.Seconds()), q.Table("cost_hourly"), hourLit(lo), hourLit(hi), where(o.Filter, costCols), groupBy(append(group, "step"))))
	if err != nil {
		return fmt.Errorf("reading the cost rollup: %w", err)
	}
	rows, err := decodeUsageRows(out)
	if err != nil {
		return fmt.Errorf("reading the cost rollup: %w", err)
	}
	for _, r := range rows {
		acc.slot(r.key(), time.Unix(r.Step, 0)).add(r.USD, r.GPUHours, r.ReplicaHours)
	}
	return nil
}

// interval is a stretch during which ready replicas ran at one price.
type interval struct {
	keyRow
	GPUs   int64   `json:"gpus"`
	Ready  int64   `json:"ready"`
	USD    float64 `json:"usd"`
	FromMS int64   `json:"from_ms"`
	ToMS   int64   `json:"to_ms"`
	// Offer is the offer the replicas ran on (location/zone/instance type/market).
	Offer string `json:"offer_id"`
}

// spread adds the part of iv inside [a, b) to acc, split at hour boundaries in integer
// milliseconds like the rollup's view.
func (iv interval) spread(acc *usageAcc, a, b time.Time) {
	from, to := max(iv.FromMS, a.UnixMilli()), min(iv.ToMS, b.UnixMilli())
	const hourMS = int64(time.Hour / time.Millisecond)
	for from < to {
		h := from / hourMS * hourMS
		end := min(to, h+hourMS)
		ms := float64(end - from)
		r := float64(iv.Ready)
		acc.slot(iv.key(), time.UnixMilli(h)).add(r*iv.USD*ms/float64(hourMS), r*float64(iv.GPUs)*ms/float64(hourMS), r*ms/float64(hourMS))
		from = end
	}
}

// edgeUsage adds the usage inside [a, b), the part of one hour at an edge of the window that the
// rollup's whole hours leave out, from the replica_state intervals that overlap it. The query
// clips each interval to [a, b) and sums by key, so an edge sends back a row per series, not one
// per sample (a busy hour holds hundreds per series).
func edgeUsage(ctx context.Context, q Querier, o Options, a, b time.Time, acc *usageAcc) error {
	sel, group := acc.cols.selectKey()
	rows, err := queryRows[struct {
		keyRow
		USD          float64 `json:"usd"`
		GPUHours     float64 `json:"gpu_hours"`
		ReplicaHours float64 `json:"replica_hours"`
	}](ctx, q, fmt.Sprintf(`SELECT %s
		sum(prev_ready * prev_usd_per_hour * ms) / 3600000 AS usd, sum(prev_ready * gpus_per_replica * ms) / 3600000 AS gpu_hours,
		sum(prev_ready * ms) / 3600000 AS replica_hours
		FROM (SELECT workload, location, provider, market, gpu_model, gpus_per_replica, prev_ready, prev_usd_per_hour,
				least(toUnixTimestamp64Milli(at), %d) - greatest(toUnixTimestamp64Milli(prev_at), %d) AS ms
			FROM %s WHERE prev_ready > 0 AND at > prev_at AND at > %s AND prev_at < %s AND %s)
		%s`,
		sel, b.UnixMilli(), a.UnixMilli(), q.Table("replica_state"), ms64(a), ms64(b), where(o.Filter, costCols), groupBy(group)))
	if err != nil {
		return fmt.Errorf("reading replica intervals: %w", err)
	}
	for _, r := range rows {
		acc.slot(r.key(), a).add(r.USD, r.GPUHours, r.ReplicaHours)
	}
	return nil
}

// openIntervals returns the interval each group (workload, location, market) has had open since
// its latest report, where that report is before until. It reads replica_latest, which a view
// keeps at each series' latest sample (a few rows per series, however long the history), not a
// GROUP BY over replica_state. A group runs one offer at a time: when it moves to another offer,
// the old offer's series stops with a last sample that still says ready, so only the offer of the
// group's newest report is open (the filter applies to that choice, not before it).
func openIntervals(ctx context.Context, q Querier, f Filter, until time.Time) ([]interval, error) {
	ivs, err := queryRows[interval](ctx, q, fmt.Sprintf(`SELECT * FROM (
		SELECT workload, location, argMax(p, last) AS provider, market, argMax(g, last) AS gpu, gpu AS gpu_model,
			argMax(n, last) AS gpus, argMax(r, last) AS ready, argMax(u, last) AS usd, argMax(offer, last) AS offer_id,
			toUnixTimestamp64Milli(max(last)) AS from_ms
		FROM (SELECT workload, location, market, offer, argMax(provider, at) AS p, argMax(gpu_model, at) AS g,
				argMax(gpus_per_replica, at) AS n, argMax(ready, at) AS r, argMax(usd_per_hour, at) AS u,
				max(at) AS last
			FROM %s GROUP BY workload, location, market, offer)
		GROUP BY workload, location, market)
		WHERE ready > 0 AND from_ms < %d AND %s`,
		q.Table("replica_latest"), until.UnixMilli(), where(f, costCols)))
	if err != nil {
		return nil, fmt.Errorf("reading the replicas running now: %w", err)
	}
	return ivs, nil
}

func openUsage(ctx context.Context, q Querier, o Options, acc *usageAcc) error {
	end := o.Window.Until
	if !o.Now.IsZero() && o.Now.Before(end) {
		end = o.Now
	}
	if !end.After(o.Window.Since) {
		return nil
	}
	ivs, err := openIntervals(ctx, q, o.Filter, end)
	if err != nil {
		return err
	}
	if len(ivs) == 0 {
		return nil
	}
	heard, err := lastHeard(ctx, q)
	if err != nil {
		return err
	}
	for _, iv := range ivs {
		iv.ToMS = min(end.UnixMilli(), heard)
		iv.spread(acc, o.Window.Since, end)
	}
	return nil
}

// lastHeard is the time, in Unix milliseconds, of the fleet's latest replica.state report: the
// last time the arbiter was heard from. The arbiter reports every replica group on
// every pass, so a series still open runs, as far as the history knows, until then and no
// longer: its spend is never extended to the time the report is run, and a report over a
// history that ended (the demo's, an arbiter stopped) gives the same figures on every run.
func lastHeard(ctx context.Context, q Querier) (int64, error) {
	rows, err := queryRows[struct {
		LastMS int64 `json:"last_ms"`
	}](ctx, q, fmt.Sprintf(`SELECT toUnixTimestamp64Milli(max(at)) AS last_ms FROM %s`, q.Table("replica_latest")))
	if err != nil {
		return 0, fmt.Errorf("reading when the fleet last reported: %w", err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return rows[0].LastMS, nil
}
