package report

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// group is the sum of usage over the keys that share the --by dimensions' values.
type group struct {
	values   []string
	usd      float64
	gpuHours float64
	repHours float64
	byMarket map[string]float64
	basis    basisCount
}

// groupUsage sums usage by the --by dimensions, groups in a stable order.
func groupUsage(us []Usage, o Options) []*group {
	m := map[string]*group{}
	for _, u := range us {
		vals := make([]string, len(o.By))
		for i, d := range o.By {
			vals[i] = u.dim(d, o)
		}
		k := strings.Join(vals, "\x00")
		g := m[k]
		if g == nil {
			g = &group{values: vals, byMarket: map[string]float64{}}
			m[k] = g
		}
		g.usd += u.USD
		g.gpuHours += u.GPUHours
		g.repHours += u.ReplicaHours
		g.byMarket[u.Market] += u.USD
		g.basis.add(u)
	}
	out := make([]*group, 0, len(m))
	for _, g := range m {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.Join(out[i].values, "\x00") < strings.Join(out[j].values, "\x00")
	})
	return out
}

// label is the group's values joined for a legend.
func label(values []string) string {
	if len(values) == 0 {
		return "all"
	}
	return strings.Join(values, "/")
}

func dimsRow(by []Dim, values []string) cli.Row {
	r := cli.Row{}
	for i, d := range by {
		r[string(d)] = values[i]
	}
	return r
}

// Cost is `report cost`: spend, GPU-hours and cost per GPU-hour, and the share of spend on spot,
// on-demand and reserved capacity, by the --by dimensions.
func Cost(ctx context.Context, q Querier, o Options) (*Result, error) {
	us, err := costUsage(ctx, q, o, bucketOf(o.Window), usageCols(o, Market))
	if err != nil {
		return nil, err
	}
	res := &Result{Title: "Cost, " + o.Window.String(),
		Columns: append(byColumns(o.By), "usd", "gpu_hours", "usd_per_gpu_hour", "spot_share", "on_demand_share", "reserved_share", "basis"),
		Notes:   []string{basisNote(o)}}
	total := &group{byMarket: map[string]float64{}}
	for _, g := range groupUsage(us, o) {
		res.Rows = append(res.Rows, costRow(dimsRow(o.By, g.values), g))
		total.usd += g.usd
		total.gpuHours += g.gpuHours
		total.basis.billed, total.basis.all = total.basis.billed+g.basis.billed, total.basis.all+g.basis.all
		for k, v := range g.byMarket {
			total.byMarket[k] += v
		}
	}
	if len(o.By) > 0 {
		tr := cli.Row{string(o.By[0]): "TOTAL"}
		res.Total = costRow(tr, total)
	}
	res.Series = usageSeries(us, o, "Spend (USD)", func(u Usage) float64 { return u.USD })
	return res, nil
}

func costRow(r cli.Row, g *group) cli.Row {
	r["usd"] = round(g.usd, 2)
	r["gpu_hours"] = round(g.gpuHours, 3)
	r["usd_per_gpu_hour"] = round(ratio(g.usd, g.gpuHours), 4)
	r["spot_share"] = round(ratio(g.byMarket["spot"], g.usd), 4)
	r["on_demand_share"] = round(ratio(g.byMarket["on_demand"], g.usd), 4)
	r["reserved_share"] = round(ratio(g.byMarket["reserved"], g.usd), 4)
	r["basis"] = g.basis.label()
	return r
}

// bucketOf is the chart's time step: hours for windows up to three days, days beyond.
func bucketOf(w Window) time.Duration {
	if w.Hours() <= 72 {
		return time.Hour
	}
	return 24 * time.Hour
}

// usageSeries plots value(u) over time, one line per group (the top few by total, the rest as
// "other").
func usageSeries(us []Usage, o Options, ylabel string, value func(Usage) float64) *Series {
	pts := make([]Point, 0, len(us))
	for _, u := range us {
		vals := make([]string, len(o.By))
		for i, d := range o.By {
			vals[i] = u.dim(d, o)
		}
		pts = append(pts, Point{Line: label(vals), At: u.Hour, Value: value(u)})
	}
	return NewSeries(ylabel, o.Window, bucketOf(o.Window), pts)
}
