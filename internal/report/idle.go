package report

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// IdleOptions adds what counts as idle to Options.
type IdleOptions struct {
	Options
	// Threshold is the utilization, in percent, below which a GPU counts as idle (default 5).
	Threshold float64
	// MaxGap is the longest a sample speaks for: a GPU not heard from for longer is not counted
	// (default 5m, a few sampling intervals).
	MaxGap time.Duration
}

// Idle is `report idle`: GPU-hours paid for but idle, from gpu.sample utilization, and what they
// cost at the price paid per GPU-hour at the same location for the same GPU model.
func Idle(ctx context.Context, q Querier, o IdleOptions) (*Result, error) {
	for _, d := range o.By {
		if d == Workload || d == Market {
			return nil, fmt.Errorf("--by %s: GPU samples are kept by location, node and GPU; use location, provider, region or gpu", d)
		}
	}
	if o.Threshold <= 0 {
		o.Threshold = 5
	}
	if o.MaxGap <= 0 {
		o.MaxGap = 5 * time.Minute
	}
	rows, err := idleHours(ctx, q, o)
	if err != nil {
		return nil, err
	}
	us, err := loadUsageOf(ctx, q, o.Options, 24*time.Hour, usageCols(o.Options, Location, GPU))
	if err != nil {
		return nil, err
	}
	paid := map[[2]string][2]float64{} // (location, gpu) -> usd, GPU-hours
	for _, u := range us {
		k := [2]string{u.Location, u.GPU}
		p := paid[k]
		paid[k] = [2]float64{p[0] + u.USD, p[1] + u.GPUHours}
	}
	type agg struct {
		vals                []string
		hours, idle, idleUS float64
	}
	groups := map[string]*agg{}
	for _, r := range rows {
		k := Key{Location: r.Location, GPU: r.GPU, Provider: o.provider(r.Location)}
		if !o.Filter.keep(Region, o.region(r.Location)) || !o.Filter.keep(Provider, k.Provider) {
			continue
		}
		vals := make([]string, len(o.By))
		for i, d := range o.By {
			vals[i] = k.dim(d, o.Options)
		}
		id := strings.Join(vals, "\x00")
		if groups[id] == nil {
			groups[id] = &agg{vals: vals}
		}
		a, p := groups[id], paid[[2]string{r.Location, r.GPU}]
		a.hours += r.Hours
		a.idle += r.Idle
		a.idleUS += r.Idle * ratio(p[0], p[1])
	}
	res := &Result{Title: fmt.Sprintf("Idle GPUs (under %g%% utilization), %s", o.Threshold, o.Window),
		Columns: append(byColumns(o.By), "gpu_hours_sampled", "idle_gpu_hours", "idle_share", "idle_usd")}
	var t agg
	for _, id := range sortedKeys(groups) {
		a := groups[id]
		res.Rows = append(res.Rows, idleRow(dimsRow(o.By, a.vals), a.hours, a.idle, a.idleUS))
		t.hours, t.idle, t.idleUS = t.hours+a.hours, t.idle+a.idle, t.idleUS+a.idleUS
	}
	if len(o.By) > 0 {
		res.Total = idleRow(cli.Row{string(o.By[0]): "TOTAL"}, t.hours, t.idle, t.idleUS)
	}
	return res, nil
}

func idleRow(r cli.Row, hours, idle, usd float64) cli.Row {
	r["gpu_hours_sampled"] = round(hours, 3)
	r["idle_gpu_hours"] = round(idle, 3)
	r["idle_share"] = round(ratio(idle, hours), 4)
	r["idle_usd"] = round(usd, 2)
	return r
}

// provider returns the provider of a location from the fleet file, or "".
func (o Options) provider(location string) string {
	if o.Fleet == nil {
		return ""
	}
	if l, ok := o.Fleet.Location(location); ok {
		return l.Provider
	}
	return ""
}

type idleRowData struct {
	Location string  `json:"location"`
	GPU      string  `json:"gpu"`
	Hours    float64 `json:"hours"`
	Idle     float64 `json:"idle"`
}

// idleHours sums, per location and GPU model, the time each GPU's samples speak for (until the
// GPU's next sample, at most MaxGap, inside the window) and the part of it spent under the
// threshold.
func idleHours(ctx context.Context, q Querier, o IdleOptions) ([]idleRowData, error) {
	since, until, gap := o.Window.Since.UnixMilli(), o.Window.Until.UnixMilli(), o.MaxGap.Milliseconds()
	rows, err := queryRows[idleRowData](ctx, q, fmt.Sprintf(`SELECT location, model AS gpu,
		sum(dur) / 3600000 AS hours, sum(if(util < %g, dur, 0)) / 3600000 AS idle
		FROM (
			SELECT location, model, utilization_pct AS util,
				least(leadInFrame(toUnixTimestamp64Milli(at), 1, toInt64(%d)) OVER
					(PARTITION BY location, node, uuid ORDER BY at ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING),
					toUnixTimestamp64Milli(at) + %d, %d) - greatest(toUnixTimestamp64Milli(at), %d) AS dur
			FROM %s WHERE at >= %s AND at < %s AND %s
		) WHERE dur > 0 GROUP BY location, gpu`,
		o.Threshold, until, gap, until, since, q.Table("gpu_sample"),
		ms64(o.Window.Since.Add(-o.MaxGap)), ms64(o.Window.Until),
		where(o.Filter, map[Dim]string{Location: "location", GPU: "model"})))
	if err != nil {
		return nil, fmt.Errorf("reading GPU samples: %w", err)
	}
	return rows, nil
}
