package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// fleetKey is one row of the fleet report.
type fleetKey struct{ workload, location, gpu, market string }

// fleetRow is what the fleet holds at one fleetKey now.
type fleetRow struct {
	provider                string
	ready, desired, pending int64
	usdPerHour              float64
}

// Fleet is the fleet at the window's end, by workload, location, GPU type and market: replicas
// ready, desired, launching and draining, held for approval, what it costs per hour now, what
// its tokens cost over the window, and the demand on it (tokens per second over the window's
// last hour) beside what its ready replicas serve by the fleet file's rates. Its cost per million
// tokens and its demand are the tokens report's own, run by workload, location, GPU and market.
func Fleet(ctx context.Context, q Querier, o Options) (*Result, error) {
	end := o.Window.Until
	rows, err := fleetNow(ctx, q, o, end)
	if err != nil {
		return nil, err
	}
	if err := addPending(ctx, q, o, rows); err != nil {
		return nil, err
	}
	perMTok, err := tokensBy(ctx, q, o, o.Window)
	if err != nil {
		return nil, err
	}
	lastHour := Window{Since: end.Add(-time.Hour), Until: end}
	if lastHour.Since.Before(o.Window.Since) {
		lastHour.Since = o.Window.Since
	}
	demand, err := tokensBy(ctx, q, o, lastHour)
	if err != nil {
		return nil, err
	}
	res := &Result{Title: "Fleet at " + end.UTC().Format(time.RFC3339), Columns: []string{"workload", "location", "provider",
		"gpu", "market", "ready", "desired", "launching", "draining", "pending_approval", "usd_per_hour", "usd_per_m_tokens",
		"demand_per_s", "capacity_per_s", "unit"},
		Notes: []string{fmt.Sprintf("usd_per_m_tokens over %s as report tokens --by workload,location,gpu,market gives it; "+
			"demand_per_s is over %s, in the unit of the workload's scaling metric (tokens/s without the fleet file)", o.Window, lastHour)}}
	keys := make([]fleetKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b fleetKey) int {
		return cmp.Or(cmp.Compare(a.workload, b.workload), cmp.Compare(a.location, b.location), cmp.Compare(a.gpu, b.gpu), cmp.Compare(a.market, b.market))
	})
	for _, k := range keys {
		f := rows[k]
		r := cli.Row{"workload": k.workload, "location": k.location, "provider": f.provider, "gpu": k.gpu, "market": k.market,
			"ready": f.ready, "desired": f.desired, "launching": max(f.desired-f.ready, 0), "draining": max(f.ready-f.desired, 0),
			"pending_approval": f.pending, "usd_per_hour": round(f.usdPerHour, 4), "usd_per_m_tokens": nil,
			"demand_per_s": nil, "capacity_per_s": nil, "unit": nil}
		if t, ok := perMTok[k]; ok {
			r["usd_per_m_tokens"] = t["usd_per_m_tokens"]
		}
		col, unit := o.demandUnit(k.workload)
		if t, ok := demand[k]; ok {
			r["demand_per_s"] = round(float64(t[col].(int64))/lastHour.Until.Sub(lastHour.Since).Seconds(), 2)
			r["unit"] = unit
		}
		if rate := o.rate(k.workload, k.gpu); rate > 0 {
			r["capacity_per_s"] = round(float64(f.ready)*rate, 2)
			r["unit"] = unit
		}
		res.Rows = append(res.Rows, r)
	}
	if o.Fleet == nil {
		res.Notes = append(res.Notes, "capacity needs the fleet file's serving.per_replica rates: give the fleet")
	} else {
		res.Notes = append(res.Notes, "capacity is ready replicas times serving.per_replica, in the workload's scaling unit (tokens or requests per second)")
	}
	return res, nil
}

// demandUnit is the tokens report's column that counts workload's demand in the unit of its
// scaling metric, and the unit's name: a workload sized by requests compares requests per second
// with its replicas' rates, one sized by generated tokens generation tokens. Tokens (prompt and
// generated) without the fleet file.
func (o Options) demandUnit(workload string) (column, unit string) {
	if o.Fleet != nil {
		if w, ok := o.Fleet.Workload(workload); ok {
			switch w.Scaling.Metric {
			case fleet.MetricRequests:
				return "requests", "requests/s"
			case fleet.MetricOutputTokens:
				return "generation_tokens", "output tokens/s"
			}
		}
	}
	return "tokens", "tokens/s"
}

// fleetNow reads each group's state at end, split by the GPU types of its offers; groups with
// nothing ready or desired are left out.
func fleetNow(ctx context.Context, q Querier, o Options, end time.Time) (map[fleetKey]*fleetRow, error) {
	states, err := fleetStates(ctx, q, o.Filter, end, end)
	if err != nil {
		return nil, err
	}
	out := map[fleetKey]*fleetRow{}
	for _, s := range states {
		if !o.Filter.keep(Region, o.region(s.Location)) || !o.Filter.keep(Team, o.team(s.Workload)) {
			continue
		}
		for i, gpu := range s.GPUs {
			if !o.Filter.keep(GPU, gpu) || s.Readys[i] == 0 && s.Desireds[i] == 0 {
				continue
			}
			k := fleetKey{s.Workload, s.Location, gpu, s.Market}
			f := out[k]
			if f == nil {
				f = &fleetRow{provider: s.Provider}
				out[k] = f
			}
			f.ready += s.Readys[i]
			f.desired += s.Desireds[i]
			f.usdPerHour += float64(s.Readys[i]) * s.Prices[i]
		}
	}
	return out, nil
}

// addPending adds the replicas the window's pending holds would launch or drain, as holds reads
// them, to their workload, location and market (a row of its own, GPU unknown, where nothing
// runs there yet).
func addPending(ctx context.Context, q Querier, o Options, rows map[fleetKey]*fleetRow) error {
	po := o
	po.Filter = Filter{}
	for _, d := range []Dim{Workload, Location, Market, Provider, Region} {
		if len(o.Filter[d]) > 0 {
			po.Filter[d] = o.Filter[d]
		}
	}
	ps, _, err := loadPlans(ctx, q, po, "", true)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.decision().Status != HoldPending {
			continue
		}
		for _, a := range p.Actions {
			if !a.NeedsApproval || !o.Filter.keep(Location, a.Location) || !o.Filter.keep(Market, a.Market) {
				continue
			}
			k := fleetKey{workload: p.Workload, location: a.Location, market: a.Market}
			for rk := range rows {
				if rk.workload == k.workload && rk.location == k.location && rk.market == k.market && (k.gpu == "" || rk.gpu < k.gpu) {
					k.gpu = rk.gpu
				}
			}
			if k.gpu == "" {
				k.gpu = Unknown
				if rows[k] == nil {
					rows[k] = &fleetRow{provider: o.provider(a.Location)}
				}
			}
			rows[k].pending += abs(a.Delta)
		}
	}
	return nil
}

// tokensBy runs the tokens report over w by workload, location, GPU and market, its rows by key.
func tokensBy(ctx context.Context, q Querier, o Options, w Window) (map[fleetKey]cli.Row, error) {
	to := o
	to.Window, to.By = w, []Dim{Workload, Location, GPU, Market}
	res, err := Tokens(ctx, q, TokenOptions{Options: to})
	if err != nil {
		return nil, err
	}
	out := map[fleetKey]cli.Row{}
	for _, r := range res.Rows {
		s := func(c string) string { v, _ := r[c].(string); return v }
		out[fleetKey{s("workload"), s("location"), s("gpu"), s("market")}] = r
	}
	return out, nil
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
