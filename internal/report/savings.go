package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// listPrice is one on-demand offer's latest price per GPU-hour.
type listPrice struct {
	Provider string  `json:"provider"`
	Region   string  `json:"region"`
	Zone     string  `json:"zone"`
	GPU      string  `json:"gpu"`
	PerGPU   float64 `json:"per_gpu"`
}

// onDemandPrices reads the latest on-demand price of every offer seen before until, per GPU-hour.
func onDemandPrices(ctx context.Context, q Querier, until time.Time) ([]listPrice, error) {
	ps, err := queryRows[listPrice](ctx, q, fmt.Sprintf(`SELECT provider, region, zone, gpu_model AS gpu,
		argMax(usd_per_hour, at) / greatest(argMax(gpu_count, at), 1) AS per_gpu
		FROM %s WHERE market = 'on_demand' AND at < %s
		GROUP BY provider, region, zone, instance_type, gpu_model`, q.Table("price_observed"), ms64(until)))
	if err != nil {
		return nil, fmt.Errorf("reading on-demand prices: %w", err)
	}
	return ps, nil
}

// cheapestAt is the lowest on-demand price per GPU-hour for gpu at a location, or NaN.
func cheapestAt(ps []listPrice, l *fleet.Location, gpu string) float64 {
	best := math.NaN()
	for _, p := range ps {
		if p.GPU != gpu || p.Provider != l.Provider || p.Region != l.Region {
			continue
		}
		if p.Zone != "" && len(l.Zones) > 0 && !slices.Contains(l.Zones, p.Zone) {
			continue
		}
		if math.IsNaN(best) || p.PerGPU < best {
			best = p.PerGPU
		}
	}
	return best
}

// allowed reports whether workload w may run at location l: its residency tags, when it has
// any, must meet the location's.
func allowed(c *fleet.Config, workload string, l *fleet.Location) bool {
	w, ok := c.Workload(workload)
	if !ok || len(w.Residency) == 0 {
		return true
	}
	for _, r := range w.Residency {
		if slices.Contains(l.Residency, r) {
			return true
		}
	}
	return false
}

// cheapestAllowed is the lowest on-demand price per GPU-hour for gpu anywhere workload may run.
func cheapestAllowed(c *fleet.Config, ps []listPrice, workload, gpu string) float64 {
	best := math.NaN()
	for i := range c.Locations {
		l := &c.Locations[i]
		if !allowed(c, workload, l) {
			continue
		}
		if p := cheapestAt(ps, l, gpu); !math.IsNaN(p) && (math.IsNaN(best) || p < best) {
			best = p
		}
	}
	return best
}

// Savings is `report savings`: what the same GPU-hours would have cost on on-demand at list price
// in the same locations and at the cheapest on-demand anywhere each workload may run, against
// what they cost; and what the arbitrage itself cost (moves, the egress of the weights they
// pulled, hedging launches). It needs the fleet file, which says where locations are.
func Savings(ctx context.Context, q Querier, o Options) (*Result, error) {
	if o.Fleet == nil {
		return nil, fmt.Errorf("report savings needs the fleet file (--fleet bursar.yaml) to know each location's region and where workloads may run")
	}
	us, err := costUsage(ctx, q, o, bucketOf(o.Window))
	if err != nil {
		return nil, err
	}
	ps, err := onDemandPrices(ctx, q, o.Window.Until)
	if err != nil {
		return nil, err
	}
	type agg struct {
		vals                      []string
		usd, gpuh, same, cheapest float64
		basis                     basisCount
	}
	groups := map[string]*agg{}
	missing := map[string]bool{}
	var pts []Point
	for _, u := range us {
		vals := make([]string, len(o.By))
		for i, d := range o.By {
			vals[i] = u.dim(d, o)
		}
		id := strings.Join(vals, "\x00")
		a := groups[id]
		if a == nil {
			a = &agg{vals: vals}
			groups[id] = a
		}
		same, cheap := u.USD, u.USD // no price: no saving claimed
		if l, ok := o.Fleet.Location(u.Location); ok {
			if p := cheapestAt(ps, l, u.GPU); !math.IsNaN(p) {
				same = u.GPUHours * p
			} else {
				missing[u.Location+" "+u.GPU] = true
			}
		} else {
			missing[u.Location+" (not in the fleet file)"] = true
		}
		if p := cheapestAllowed(o.Fleet, ps, u.Workload, u.GPU); !math.IsNaN(p) {
			cheap = u.GPUHours * p
		}
		a.usd, a.gpuh, a.same, a.cheapest = a.usd+u.USD, a.gpuh+u.GPUHours, a.same+same, a.cheapest+cheap
		a.basis.add(u)
		pts = append(pts, Point{Line: "actual", At: u.Hour, Value: u.USD},
			Point{Line: "on-demand, same location", At: u.Hour, Value: same},
			Point{Line: "cheapest on-demand allowed", At: u.Hour, Value: cheap})
	}
	res := &Result{Title: "Savings against on-demand, " + o.Window.String(),
		Columns: append(byColumns(o.By), "usd", "gpu_hours", "on_demand_same_usd", "saving_same_usd",
			"cheapest_on_demand_usd", "saving_cheapest_usd", "basis"), Notes: []string{basisNote(o)}}
	ids := make([]string, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var t agg
	for _, id := range ids {
		a := groups[id]
		r := savingsRow(dimsRow(o.By, a.vals), a.usd, a.gpuh, a.same, a.cheapest)
		r["basis"] = a.basis.label()
		res.Rows = append(res.Rows, r)
		t.usd, t.gpuh, t.same, t.cheapest = t.usd+a.usd, t.gpuh+a.gpuh, t.same+a.same, t.cheapest+a.cheapest
		t.basis.billed, t.basis.all = t.basis.billed+a.basis.billed, t.basis.all+a.basis.all
	}
	if len(o.By) > 0 {
		res.Total = savingsRow(cli.Row{string(o.By[0]): "TOTAL"}, t.usd, t.gpuh, t.same, t.cheapest)
		res.Total["basis"] = t.basis.label()
	}
	for _, m := range sortedKeys(missing) {
		res.Notes = append(res.Notes, "no on-demand list price for "+m+": no saving is claimed there")
	}
	ac, err := arbitrageCost(ctx, q, o)
	if err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes, ac.note())
	res.Series = NewSeries("USD", o.Window, bucketOf(o.Window), pts)
	return res, nil
}

func savingsRow(r cli.Row, usd, gpuh, same, cheapest float64) cli.Row {
	r["usd"] = round(usd, 2)
	r["gpu_hours"] = round(gpuh, 3)
	r["on_demand_same_usd"] = round(same, 2)
	r["saving_same_usd"] = round(same-usd, 2)
	r["cheapest_on_demand_usd"] = round(cheapest, 2)
	r["saving_cheapest_usd"] = round(cheapest-usd, 2)
	return r
}

// arbitrage is what moving capacity around cost: moves for a cheaper offer, the egress of the
// weights each moved replica pulled, and hedging launches.
type arbitrage struct {
	Moves, MovedReplicas, Hedges int64
	EgressUSD                    float64
}

func (a arbitrage) note() string {
	return fmt.Sprintf("arbitrage cost: %d moves (%d replicas, $%.2f egress of weights), %d hedging launches",
		a.Moves, a.MovedReplicas, a.EgressUSD, a.Hedges)
}

func arbitrageCost(ctx context.Context, q Querier, o Options) (arbitrage, error) {
	rows, err := queryRows[struct {
		Workload string `json:"workload"`
		Location string `json:"location"`
		Reason   string `json:"reason"`
		Actions  int64  `json:"actions"`
		Replicas int64  `json:"replicas"`
	}](ctx, q, fmt.Sprintf(`SELECT workload, location, reason, count() AS actions, sum(replicas) AS replicas
		FROM (SELECT workload, location, reason, argMax(replicas, at) AS replicas FROM %s
		      WHERE status = 'applied' AND kind = 'launch' AND reason IN ('cheaper_offer', 'hedge')
		        AND at >= %s AND at < %s AND %s
		      GROUP BY workload, action_id, location, reason)
		GROUP BY workload, location, reason`,
		q.Table("action_updated"), ms64(o.Window.Since), ms64(o.Window.Until),
		where(o.Filter, map[Dim]string{Workload: "workload", Location: "location"})))
	if err != nil {
		return arbitrage{}, fmt.Errorf("reading applied actions: %w", err)
	}
	var a arbitrage
	for _, r := range rows {
		if r.Reason == "hedge" {
			a.Hedges += r.Actions
			continue
		}
		a.Moves += r.Actions
		a.MovedReplicas += r.Replicas
		w, wok := o.Fleet.Workload(r.Workload)
		l, lok := o.Fleet.Location(r.Location)
		if wok && lok {
			a.EgressUSD += float64(r.Replicas) * w.WeightsGB * l.EgressPerGB
		}
	}
	return a, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
