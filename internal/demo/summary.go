package demo

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
)

// Result is the demo's report: two summary tables built from the report package's results, the
// results themselves, and the files written.
type Result struct {
	Window    report.Window
	Workloads *report.Result // per workload: availability, cost, savings, tokens, reclaims
	Summary   *report.Result // per workload and location
	ByGPU     *report.Result // tokens and cost per million tokens by GPU type
	Sections  []*report.Result
	Markdown  string   // path of the markdown report
	Charts    []string // paths of its PNG charts
}

// section is one report of the markdown file and its chart's file name ("" for none).
type section struct {
	res   *report.Result
	chart string
}

// writeReports runs the reports over the replayed window and writes them, with charts, to dir.
func writeReports(ctx context.Context, q report.Querier, cfg *fleet.Config, since, until time.Time,
	rc map[wl]*reclaimStat, served map[string]*servedStat, dir string) (*Result, error) {
	w := report.Window{Since: since, Until: until}
	o := report.Options{Window: w, By: []report.Dim{report.Workload, report.Location}, Now: until, Fleet: cfg}
	cost, err := report.Cost(ctx, q, o)
	if err != nil {
		return nil, err
	}
	tokens, err := report.Tokens(ctx, q, report.TokenOptions{Options: o})
	if err != nil {
		return nil, err
	}
	savings, err := report.Savings(ctx, q, o)
	if err != nil {
		return nil, err
	}
	bg := o
	bg.By = []report.Dim{report.Workload, report.GPU}
	byGPU, err := report.Tokens(ctx, q, report.TokenOptions{Options: bg})
	if err != nil {
		return nil, err
	}
	byGPU.Title = "Cost per million tokens by workload and GPU type, " + w.String()
	ro := o
	ro.By = nil
	reclaims, err := report.Reclaims(ctx, q, ro)
	if err != nil {
		return nil, err
	}
	h, err := readHistory(ctx, q, cfg, since, until)
	if err != nil {
		return nil, err
	}
	res := &Result{Window: w, ByGPU: byGPU, Sections: []*report.Result{cost, tokens, byGPU, savings, reclaims}}
	res.Summary = summarize(w, cost, tokens, savings, h, rc)
	res.Workloads = perWorkload(w, cfg, res.Summary, h, rc, served)
	res.Workloads.Series = readySeries(w, h.samples)
	secs := []section{{res.Workloads, "availability.png"}, {res.Summary, ""}, {byGPU, ""}, {cost, "cost.png"},
		{tokens, "tokens.png"}, {savings, "savings.png"}, {reclaims, ""}}
	return res, res.write(dir, secs)
}

// history is what the demo reads from the history beyond the report package's reports.
type history struct {
	shares    []readyShare
	samples   []readySample
	available map[string]map[string]float64 // by column (the availability target) and workload
}

func readHistory(ctx context.Context, q report.Querier, cfg *fleet.Config, since, until time.Time) (history, error) {
	var h history
	var err error
	if h.available, err = availableByWorkload(ctx, q, cfg, since, until); err != nil {
		return h, fmt.Errorf("reading replica states: %w", err)
	}
	if h.shares, err = readyShares(ctx, q, since, until); err != nil {
		return h, fmt.Errorf("reading replica states: %w", err)
	}
	if h.samples, err = readySamples(ctx, q, since, until); err != nil {
		return h, fmt.Errorf("reading replica states: %w", err)
	}
	return h, nil
}

// summaryColumns are the per workload and location table's.
var summaryColumns = []string{"workload", "location", "usd", "gpu_hours", "spot_share", "on_demand_usd", "egress_usd", "saving_pct",
	"m_tokens", "usd_per_m_tokens", "ready_pct", "reclaims", "replaced", "to_ready_min"}

// reclaimNote explains the reclaim columns.
const reclaimNote = "reclaims: spot replicas the provider took back here; replaced: those a new replica of the " +
	"workload replaced; to_ready_min: mean minutes from the notice to the replacement ready"

// summarize joins the reports' rows by workload and location.
func summarize(w report.Window, cost, tokens, savings *report.Result, h history, rc map[wl]*reclaimStat) *report.Result {
	out := &report.Result{Title: "Per workload and location, " + w.String(), Columns: summaryColumns,
		Notes: []string{"ready_pct: of the replicas asked for here, the share that was ready (replica.state, every trace minute)",
			reclaimNote}}
	byKey := map[wl]cli.Row{}
	get := func(r cli.Row) cli.Row {
		k := wl{str(r["workload"]), str(r["location"])}
		row, ok := byKey[k]
		if !ok {
			row = cli.Row{"workload": k.workload, "location": k.location}
			byKey[k] = row
		}
		return row
	}
	for _, r := range cost.Rows {
		row := get(r)
		row["usd"], row["gpu_hours"], row["spot_share"] = r["usd"], r["gpu_hours"], r["spot_share"]
	}
	for _, r := range savings.Rows {
		row := get(r)
		od, usd, egress := num(r["on_demand_same_usd"]), num(r["usd"]), num(r["egress_usd"])
		row["on_demand_usd"], row["egress_usd"] = r["on_demand_same_usd"], r["egress_usd"]
		row["saving_pct"] = pct(od-usd-egress, od)
	}
	for _, r := range tokens.Rows {
		row := get(r)
		row["m_tokens"] = round(num(r["tokens"])/1e6, 2)
		row["usd_per_m_tokens"] = r["usd_per_m_tokens"]
	}
	for _, s := range h.shares {
		get(cli.Row{"workload": s.Workload, "location": s.Location})["ready_pct"] = pct(s.Ready, s.Desired)
	}
	for k, st := range rc {
		setReclaims(get(cli.Row{"workload": k.workload, "location": k.location}), *st)
	}
	keys := make([]wl, 0, len(byKey))
	for k, row := range byKey {
		if row["reclaims"] == nil {
			setReclaims(row, reclaimStat{})
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b wl) int {
		return cmp.Or(cmp.Compare(a.workload, b.workload), cmp.Compare(a.location, b.location))
	})
	for _, k := range keys {
		out.Rows = append(out.Rows, byKey[k])
	}
	return out
}

func setReclaims(row cli.Row, st reclaimStat) {
	row["reclaims"], row["replaced"] = int64(st.reclaims), int64(st.replaced)
	if st.replaced > 0 {
		row["to_ready_min"] = round(st.toReady.Minutes()/float64(st.replaced), 1)
	}
}

// The notes of the columns the demo adds to the reports'.
const (
	enoughNote = "enough_capacity_pct: share of the replayed minutes in which the ready replicas' rates for their GPU types " +
		"(serving.per_replica) summed to at least the demand (../shared/SERVING.md's capacity-availability)"
	unservedNote = "unserved_pct: share of the demand not served (a ready replica serves up to 1.25 times its rate)"
)

// perWorkload sums the summary by workload and adds its availability: `report availability`,
// by default and with --target min.
func perWorkload(win report.Window, cfg *fleet.Config, summary *report.Result, h history, rc map[wl]*reclaimStat,
	served map[string]*servedStat) *report.Result {
	out := &report.Result{Title: "Per workload, " + win.String(),
		Columns: []string{"workload", "min_replicas", report.AvailableColumn(""), report.AvailableColumn("min"), "enough_capacity_pct", "unserved_pct",
			"usd", "on_demand_usd", "egress_usd", "saving_pct", "m_tokens", "usd_per_m_tokens", "reclaims", "replaced", "to_ready_min"},
		Notes: []string{report.AvailableColumn("") + ": share of the time from the workload's first replica.state with at least the desired replicas ready (report availability, its default)",
			report.AvailableColumn("min") + ": the same with at least min_replicas ready (report availability --target min)",
			enoughNote, unservedNote,
			"saving_pct: the on-demand cost less what was paid and less egress_usd, the egress of the weights the arbiter's own moves pulled",
			reclaimNote}}
	for _, w := range cfg.Workloads {
		var usd, od, egress, tok float64
		for _, r := range summary.Rows {
			if str(r["workload"]) == w.Name {
				usd, od, tok = usd+num(r["usd"]), od+num(r["on_demand_usd"]), tok+num(r["m_tokens"])
				egress += num(r["egress_usd"])
			}
		}
		var st reclaimStat
		for k, s := range rc {
			if k.workload == w.Name {
				st.reclaims, st.replaced, st.toReady = st.reclaims+s.reclaims, st.replaced+s.replaced, st.toReady+s.toReady
			}
		}
		row := cli.Row{"workload": w.Name, "min_replicas": int64(w.Replicas.Min),
			report.AvailableColumn(""):    h.available[report.AvailableColumn("")][w.Name],
			report.AvailableColumn("min"): h.available[report.AvailableColumn("min")][w.Name], "usd": round(usd, 2),
			"on_demand_usd": round(od, 2), "egress_usd": round(egress, 2), "saving_pct": pct(od-usd-egress, od), "m_tokens": round(tok, 2),
			"usd_per_m_tokens": round(usd/math.Max(tok, 1e-12), 4)}
		if s := served[w.Name]; s != nil {
			row["enough_capacity_pct"], row["unserved_pct"] = s.enoughPct(), s.unservedPct()
		}
		setReclaims(row, st)
		out.Rows = append(out.Rows, row)
	}
	return out
}

// readySeries plots each workload's mean ready replicas per 10 minutes of trace.
func readySeries(w report.Window, samples []readySample) *report.Series {
	const step = 10 * time.Minute
	type key struct {
		w string
		i int64
	}
	sum, n := map[key]float64{}, map[key]float64{}
	for _, s := range samples {
		k := key{s.Workload, time.UnixMilli(s.AtMS).Sub(w.Since.Truncate(step)).Milliseconds() / step.Milliseconds()}
		sum[k] += float64(s.Ready)
		n[k]++
	}
	var pts []report.Point
	for k, v := range sum {
		pts = append(pts, report.Point{Line: k.w, At: w.Since.Truncate(step).Add(time.Duration(k.i) * step), Value: v / n[k]})
	}
	return report.NewSeries("Ready replicas", w, step, pts)
}

// write renders every section into dir/report.md, with its chart beside it.
func (r *Result) write(dir string, secs []section) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating the report folder: %w", err)
	}
	r.Markdown = filepath.Join(dir, "report.md")
	f, err := os.Create(r.Markdown)
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "# Bursar demo: a real spot trace replayed, %s\n\n", r.Window)
	for _, s := range secs {
		chart := ""
		if s.chart != "" && s.res.Series != nil {
			path := filepath.Join(dir, s.chart)
			if err := writeChart(path, s.res); err != nil {
				return err
			}
			r.Charts = append(r.Charts, path)
			chart = s.chart // relative to report.md
		}
		if err := report.Write(f, "markdown", s.res, chart); err != nil {
			return err
		}
		fmt.Fprintln(f)
	}
	return f.Close()
}

func writeChart(path string, res *report.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing chart: %w", err)
	}
	if err := res.Series.RenderPNG(f, res.Title); err != nil {
		f.Close()
		return fmt.Errorf("rendering %s: %w", path, err)
	}
	return f.Close()
}

// Print writes the summary tables and where the files are.
func (r *Result) Print(w io.Writer) error {
	for _, res := range []*report.Result{r.Workloads, r.Summary, r.ByGPU} {
		fmt.Fprintf(w, "\n%s\n\n", res.Title)
		if err := report.Write(w, "table", res, ""); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nreport: %s\n", r.Markdown)
	for _, c := range r.Charts {
		fmt.Fprintf(w, "chart:  %s\n", c)
	}
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}

func pct(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a/b*100, 1)
}

func round(v float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}
