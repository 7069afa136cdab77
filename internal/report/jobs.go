package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// JobOptions are `report jobs`'s options: the common ones, and the jobs and teams to keep (all
// when empty).
type JobOptions struct {
	Options
	Jobs, Teams []string
}

// BasisArbiter is the basis of a job's cost when no replica.state priced it: the arbiter's own
// running total (job.state's usd_spent).
const BasisArbiter = "arbiter"

// jobRow is one recorded job.state, as the report reads it.
type jobRow struct {
	Job         string  `json:"job"`
	Team        string  `json:"team"`
	State       string  `json:"state"`
	WorkS       float64 `json:"work_s"`
	DoneS       float64 `json:"work_done_s"`
	DeadlineMS  int64   `json:"deadline_ms"`
	OverheadS   float64 `json:"overhead_s"`
	GPUs        int64   `json:"gpus"`
	OnDemandUSD float64 `json:"on_demand_usd_per_hour"`
	USDSpent    float64 `json:"usd_spent"`
	Preemptions int64   `json:"preemptions"`
	LostS       float64 `json:"lost_s"`
	FinishedMS  *int64  `json:"finished_ms"`
	AtMS        int64   `json:"at_ms"`
}

// job is one job's history in the window, and what the report makes of it.
type job struct {
	rows     []jobRow // in time order
	gpuHours float64  // from its running states, used when replica.state has none
	usd      float64
	basis    string
	// onDemand is the on-demand price per hour of the job's offers: its latest job.state's, or
	// the cheapest on-demand offer the fleet file allows it; 0 when neither says.
	onDemand float64
}

// last is the job's state at the window's end.
func (j *job) last() jobRow { return j.rows[len(j.rows)-1] }

// Jobs is `report jobs`: per deadline-bound job, its state at the window's end, what it cost
// and how many GPU-hours it ran, whether it met its deadline, what the same work would have cost
// on on-demand (the work plus one overhead at the on-demand price of the job's offers: its
// job.state's, or the cheapest on-demand offer seen where the fleet file lets it run) and the
// saving, and the preemptions and time they cost it. A job is in the report when it was
// submitted before the window's end and was still active in the window or changed state in it.
// Its cost and GPU-hours are priced like `report cost` (its replica.state, on --basis) over its
// whole life up to the window's end; a job no replica.state priced shows the arbiter's own total
// (basis arbiter), with GPU-hours from the time its job.state said it ran.
func Jobs(ctx context.Context, q Querier, o JobOptions) (*Result, error) {
	if len(o.By) > 0 || len(o.Filter) > 0 {
		return nil, fmt.Errorf("report jobs has one row per job and takes no --by or --filter; " +
			"keep jobs with --job and --team")
	}
	end := o.Window.Until
	if !o.Now.IsZero() && o.Now.Before(end) {
		end = o.Now
	}
	jobs, err := loadJobs(ctx, q, o, end)
	if err != nil {
		return nil, err
	}
	if err := priceJobs(ctx, q, o.Options, jobs, end); err != nil {
		return nil, err
	}
	if err := onDemandFromFleet(ctx, q, o.Options, jobs, end); err != nil {
		return nil, err
	}
	return jobsResult(o.Options, jobs, end), nil
}

// loadJobs reads the history of the jobs the report shows, up to the window's end, by name.
func loadJobs(ctx context.Context, q Querier, o JobOptions, end time.Time) (map[string]*job, error) {
	keep := "1"
	if len(o.Jobs) > 0 {
		keep += " AND job IN (" + lits(o.Jobs) + ")"
	}
	if len(o.Teams) > 0 {
		keep += " AND team IN (" + lits(o.Teams) + ")"
	}
	table := q.Table("job_state")
	rows, err := queryRows[jobRow](ctx, q, fmt.Sprintf(`SELECT job, team, state, work_s, work_done_s,
		toUnixTimestamp64Milli(deadline) AS deadline_ms, overhead_s, gpus_per_replica AS gpus,
		on_demand_usd_per_hour, usd_spent, preemptions, lost_s,
		toUnixTimestamp64Milli(finished_at) AS finished_ms, toUnixTimestamp64Milli(at) AS at_ms
		FROM (SELECT * FROM %s WHERE at < %s AND %s ORDER BY id LIMIT 1 BY id)
		WHERE job IN (SELECT job FROM %s WHERE at < %s AND %s GROUP BY job
			HAVING max(at) >= %s OR argMax(state, at) NOT IN ('finished', 'cancelled', 'failed'))
		ORDER BY job, at, id`,
		table, ms64(end), keep, table, ms64(end), keep, ms64(o.Window.Since)))
	if err != nil {
		return nil, fmt.Errorf("reading job states: %w", err)
	}
	jobs := map[string]*job{}
	for _, r := range rows {
		j := jobs[r.Job]
		if j == nil {
			j = &job{}
			jobs[r.Job] = j
		}
		j.rows = append(j.rows, r)
	}
	for _, j := range jobs {
		j.gpuHours = runGPUHours(j.rows, end.UnixMilli())
		j.onDemand = onDemandPrice(j.rows)
	}
	return jobs, nil
}

// lits quotes each value as a ClickHouse string literal, comma-separated.
func lits(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = lit(v)
	}
	return strings.Join(q, ", ")
}

// runGPUHours sums the time a job's states say it ran (running or checkpointing, up to its next
// state or endMS) times the GPUs it ran on.
func runGPUHours(rows []jobRow, endMS int64) float64 {
	var h float64
	for i, r := range rows {
		if r.State != "running" && r.State != "checkpointing" {
			continue
		}
		to := endMS
		if i+1 < len(rows) {
			to = rows[i+1].AtMS
		}
		h += float64(max(0, to-r.AtMS)) / 3.6e6 * float64(r.GPUs)
	}
	return h
}

// priceJobs sets each job's cost and GPU-hours from its replica.state, as `report cost` prices
// the workload named for it, from the first job's first state to end; a job with no replica.state
// keeps its GPU-hours from its states and costs what the arbiter counted.
func priceJobs(ctx context.Context, q Querier, o Options, jobs map[string]*job, end time.Time) error {
	if len(jobs) == 0 {
		return nil
	}
	since := end
	names := make([]string, 0, len(jobs))
	for name, j := range jobs {
		names = append(names, name)
		since = minTime(since, time.UnixMilli(j.rows[0].AtMS))
	}
	po := Options{Window: Window{Since: since.UTC(), Until: end}, Filter: Filter{Workload: names}, Now: end, Basis: o.Basis}
	us, err := costUsage(ctx, q, po, 24*time.Hour, usageCols(po, Workload))
	if err != nil {
		return err
	}
	priced := map[string]*group{}
	for _, u := range us {
		g := priced[u.Workload]
		if g == nil {
			g = &group{}
			priced[u.Workload] = g
		}
		g.usd += u.USD
		g.gpuHours += u.GPUHours
		g.basis.add(u)
	}
	for name, j := range jobs {
		if g := priced[name]; g != nil && g.gpuHours > 0 {
			j.usd, j.gpuHours, j.basis = g.usd, g.gpuHours, g.basis.label()
			continue
		}
		j.usd, j.basis = j.last().USDSpent, BasisArbiter
	}
	return nil
}

// deadlineMet says whether a job met its deadline: met or missed once it finished (or failed),
// missed when unfinished past it, pending before it; a cancelled job has none to meet.
func deadlineMet(r jobRow, endMS int64) string {
	switch {
	case r.State == "cancelled":
		return "cancelled"
	case r.State == "finished" && r.FinishedMS != nil:
		if *r.FinishedMS <= r.DeadlineMS {
			return "met"
		}
		return "missed"
	case r.State == "failed" || endMS > r.DeadlineMS:
		return "missed"
	}
	return "pending"
}

// onDemandFromFleet prices, for each job whose events carried no on-demand price and that the
// fleet file names, a replica on the cheapest on-demand offer seen where the job may run, for
// any of its GPU models.
func onDemandFromFleet(ctx context.Context, q Querier, o Options, jobs map[string]*job, end time.Time) error {
	if o.Fleet == nil {
		return nil
	}
	var ps []listPrice
	loaded := false
	for name, j := range jobs {
		w, ok := o.Fleet.Workload(name)
		if j.onDemand > 0 || !ok || w.GPU.Count < 1 {
			continue
		}
		if !loaded {
			var err error
			if ps, err = onDemandPrices(ctx, q, end); err != nil {
				return err
			}
			loaded = true
		}
		best := math.NaN()
		for _, gpu := range w.GPU.Models {
			if p := cheapestAllowed(o.Fleet, ps, name, gpu); !math.IsNaN(p) && (math.IsNaN(best) || p < best) {
				best = p
			}
		}
		if !math.IsNaN(best) {
			j.onDemand = best * float64(w.GPU.Count)
		}
	}
	return nil
}

// onDemandPrice is the job's latest known on-demand price per hour, or 0.
func onDemandPrice(rows []jobRow) float64 {
	for _, r := range slices.Backward(rows) {
		if r.OnDemandUSD > 0 {
			return r.OnDemandUSD
		}
	}
	return 0
}

// jobColumns are `report jobs`'s columns.
var jobColumns = []string{"job", "team", "state", "deadline", "deadline_met", "finished_at", "work_h", "done_pct",
	"gpu_hours", "usd", "on_demand_usd", "savings_usd", "savings_pct", "preemptions", "lost_h", "basis"}

// jobsResult makes one row per job, by name, and the total.
func jobsResult(o Options, jobs map[string]*job, end time.Time) *Result {
	res := &Result{Title: "Jobs, " + o.Window.String(), Columns: jobColumns,
		Notes: []string{basisNote(o) + "; arbiter = job.state's usd_spent, where no replica.state priced the job",
			"on_demand_usd: the work plus one overhead at the on-demand price of the job's offers " +
				"(job.state's, or the cheapest on-demand offer the fleet file allows); " +
				"lost_h: time lost to preemptions and (re)launch overheads"}}
	names := make([]string, 0, len(jobs))
	for name := range jobs {
		names = append(names, name)
	}
	slices.Sort(names)
	var tot jobTotal
	for _, name := range names {
		row := jobResultRow(jobs[name], end.UnixMilli())
		tot.add(row)
		res.Rows = append(res.Rows, row)
	}
	if len(names) > 0 {
		res.Total = tot.row()
	}
	if tot.unpriced > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d jobs carried no on-demand price: no saving shown for them", tot.unpriced))
	}
	return res
}

func jobResultRow(j *job, endMS int64) cli.Row {
	l := j.last()
	r := cli.Row{"job": l.Job, "team": l.Team, "state": l.State,
		"deadline":     time.UnixMilli(l.DeadlineMS).UTC().Format(time.RFC3339),
		"deadline_met": deadlineMet(l, endMS), "finished_at": nil,
		"work_h": round(l.WorkS/3600, 3), "done_pct": round(ratio(l.DoneS, l.WorkS)*100, 1),
		"gpu_hours": round(j.gpuHours, 3), "usd": round(j.usd, 2),
		"on_demand_usd": nil, "savings_usd": nil, "savings_pct": nil,
		"preemptions": l.Preemptions, "lost_h": round(l.LostS/3600, 3), "basis": j.basis}
	if l.FinishedMS != nil {
		r["finished_at"] = time.UnixMilli(*l.FinishedMS).UTC().Format(time.RFC3339)
	}
	if p := j.onDemand; p > 0 {
		od := (l.WorkS + l.OverheadS) / 3600 * p
		r["on_demand_usd"], r["savings_usd"] = round(od, 2), round(od-j.usd, 2)
		r["savings_pct"] = round((od-j.usd)/od*100, 1)
	}
	return r
}

// jobTotal sums the jobs' rows: spend, the on-demand cost of the jobs that carried a price,
// and how many deadlines were met of those decided.
type jobTotal struct {
	gpuHours, usd, pricedUSD, onDemand, lostH float64
	preemptions                               int64
	met, decided, unpriced                    int
}

func (t *jobTotal) add(r cli.Row) {
	t.gpuHours += r["gpu_hours"].(float64)
	t.usd += r["usd"].(float64)
	t.lostH += r["lost_h"].(float64)
	t.preemptions += r["preemptions"].(int64)
	switch r["deadline_met"] {
	case "met":
		t.met++
		t.decided++
	case "missed":
		t.decided++
	}
	od, ok := r["on_demand_usd"].(float64)
	if !ok {
		t.unpriced++
		return
	}
	t.onDemand += od
	t.pricedUSD += r["usd"].(float64)
}

func (t *jobTotal) row() cli.Row {
	r := cli.Row{"job": "TOTAL", "deadline_met": fmt.Sprintf("%d/%d met", t.met, t.decided),
		"gpu_hours": round(t.gpuHours, 3), "usd": round(t.usd, 2), "preemptions": t.preemptions,
		"lost_h": round(t.lostH, 3)}
	if t.onDemand > 0 {
		r["on_demand_usd"], r["savings_usd"] = round(t.onDemand, 2), round(t.onDemand-t.pricedUSD, 2)
		r["savings_pct"] = round((t.onDemand-t.pricedUSD)/t.onDemand*100, 1)
	}
	return r
}
