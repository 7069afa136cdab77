package report

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/cli"
)

// Budget is `report budget`: each policy's spend in its current period at Now, the burn rate and
// the forecast to the period's end, against its limit. Spend is measured exactly as the arbiter
// measures it (budget.Measure), from the replica intervals in the history. Policies come from
// the caller (the budgets bucket in NATS KV, or a policy file).
func Budget(ctx context.Context, q Querier, policies []budget.Policy, o Options) (*Result, error) {
	res := &Result{Title: "Budgets at " + o.Now.UTC().Format(time.RFC3339),
		Columns: []string{"policy", "scope", "period", "period_start", "limit", "currency", "spend", "spend_pct",
			"burn_per_hour", "forecast", "forecast_pct", "reached"}}
	if len(policies) == 0 {
		res.Notes = append(res.Notes, "no budget policies: set one with `arbiter budget set`")
		return res, nil
	}
	earliest := o.Now
	for _, p := range policies {
		if s, _ := budget.Bounds(p.Period, o.Now); s.Before(earliest) {
			earliest = s
		}
	}
	ivs, err := budgetIntervals(ctx, q, o, earliest)
	if err != nil {
		return nil, err
	}
	for _, p := range policies {
		s := budget.Measure(p, ivs, o.Now)
		var reached []string
		for _, t := range budget.Reached(p, s) {
			reached = append(reached, t.Key()+" "+string(t.Action))
		}
		res.Rows = append(res.Rows, cli.Row{"policy": p.Name, "scope": p.Scope.String(), "period": string(p.Period),
			"period_start": s.PeriodStart.Format(time.RFC3339), "limit": p.Limit, "currency": p.Currency,
			"spend": round(s.Actual, 2), "spend_pct": round(100*ratio(s.Actual, p.Limit), 1),
			"burn_per_hour": round(s.BurnPerHour, 2), "forecast": round(s.Forecast, 2),
			"forecast_pct": round(100*ratio(s.Forecast, p.Limit), 1), "reached": strings.Join(reached, "; ")})
	}
	return res, nil
}

// budgetIntervals reads the replica intervals since from: the closed ones from replica_state and
// the one each series has had open since its latest sample (To zero: still running).
func budgetIntervals(ctx context.Context, q Querier, o Options, from time.Time) ([]budget.Interval, error) {
	closed, err := queryRows[interval](ctx, q, fmt.Sprintf(`SELECT workload, location, provider, market,
		gpu_model AS gpu, gpus_per_replica AS gpus, prev_ready AS ready, prev_usd_per_hour AS usd,
		toUnixTimestamp64Milli(prev_at) AS from_ms, toUnixTimestamp64Milli(at) AS to_ms
		FROM %s WHERE prev_ready > 0 AND at > prev_at AND at > %s AND prev_at < %s`,
		q.Table("replica_state"), ms64(from), ms64(o.Now)))
	if err != nil {
		return nil, fmt.Errorf("reading replica intervals: %w", err)
	}
	open, err := openIntervals(ctx, q, nil, o.Now)
	if err != nil {
		return nil, err
	}
	team := func(w string) string {
		if o.Fleet != nil {
			if wl, ok := o.Fleet.Workload(w); ok {
				return wl.Team
			}
		}
		return ""
	}
	out := make([]budget.Interval, 0, len(closed)+len(open))
	for _, iv := range closed {
		out = append(out, budget.Interval{Workload: iv.Workload, Team: team(iv.Workload), Provider: iv.Provider,
			Location: iv.Location, Count: int(iv.Ready), USDPerHour: iv.USD,
			From: time.UnixMilli(iv.FromMS).UTC(), To: time.UnixMilli(iv.ToMS).UTC()})
	}
	for _, iv := range open {
		out = append(out, budget.Interval{Workload: iv.Workload, Team: team(iv.Workload), Provider: iv.Provider,
			Location: iv.Location, Count: int(iv.Ready), USDPerHour: iv.USD, From: time.UnixMilli(iv.FromMS).UTC()})
	}
	return out, nil
}
