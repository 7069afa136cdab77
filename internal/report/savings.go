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

// priceBook is cheapestAt and cheapestAllowed, each looked up once for a location or workload
// and a GPU type, not once a series and step.
type priceBook struct {
	c                *fleet.Config
	ps               []listPrice
	atLoc, byAllowed map[[2]string]float64
}

func newPriceBook(c *fleet.Config, ps []listPrice) *priceBook {
	return &priceBook{c: c, ps: ps, atLoc: map[[2]string]float64{}, byAllowed: map[[2]string]float64{}}
}

func (b *priceBook) at(l *fleet.Location, gpu string) float64 {
	k := [2]string{l.Name, gpu}
	p, ok := b.atLoc[k]
	if !ok {
		p = cheapestAt(b.ps, l, gpu)
		b.atLoc[k] = p
	}
	return p
}

func (b *priceBook) allowed(workload, gpu string) float64 {
	k := [2]string{workload, gpu}
	p, ok := b.byAllowed[k]
	if !ok {
		p = cheapestAllowed(b.c, b.ps, workload, gpu)
		b.byAllowed[k] = p
	}
	return p
}

// Savings is `report savings`: what the same GPU-hours would have cost on on-demand at list price
// in the same locations and at the cheapest on-demand anywhere each workload may run, against
// what they cost and what the arbitrage itself spent to get them: the savings are net of the
// egress of the weights the arbiter's own moves pulled, which has its own column. Moves and
// hedging launches are counted in a note. It needs the fleet file, which says where locations
// are.
func Savings(ctx context.Context, q Querier, o Options) (*Result, error) {
	if o.Fleet == nil {
		return nil, fmt.Errorf("report savings needs the fleet file (--fleet bursar.yaml) to know each location's region and where workloads may run")
	}
	us, err := costUsage(ctx, q, o, bucketOf(o.Window), usageCols(o, Workload, Location, Market, GPU))
	if err != nil {
		return nil, err
	}
	ps, err := onDemandPrices(ctx, q, o.Window.Until)
	if err != nil {
		return nil, err
	}
	ac, err := arbitrageCost(ctx, q, o)
	if err != nil {
		return nil, err
	}
	groups := map[string]*savingsAgg{}
	group := func(k Key) *savingsAgg {
		vals := make([]string, len(o.By))
		for i, d := range o.By {
			vals[i] = k.dim(d, o)
		}
		id := strings.Join(vals, "\x00")
		a := groups[id]
		if a == nil {
			a = &savingsAgg{vals: vals}
			groups[id] = a
		}
		return a
	}
	missing := map[string]bool{}
	gpuOf := map[[3]string]string{}
	book := newPriceBook(o.Fleet, ps)
	var pts []Point
	for _, u := range us {
		a := group(u.Key)
		gpuOf[[3]string{u.Workload, u.Location, u.Market}] = u.GPU
		same, cheap := u.USD, u.USD // no price: no saving claimed
		if l, ok := o.Fleet.Location(u.Location); ok {
			if p := book.at(l, u.GPU); !math.IsNaN(p) {
				same = u.GPUHours * p
			} else {
				missing[u.Location+" "+u.GPU] = true
			}
		} else {
			missing[u.Location+" (not in the fleet file)"] = true
		}
		if p := book.allowed(u.Workload, u.GPU); !math.IsNaN(p) {
			cheap = u.GPUHours * p
		}
		a.usd, a.gpuh, a.same, a.cheapest = a.usd+u.USD, a.gpuh+u.GPUHours, a.same+same, a.cheapest+cheap
		a.basis.add(u)
		pts = append(pts, Point{Line: "actual", At: u.Hour, Value: u.USD},
			Point{Line: "on-demand, same location", At: u.Hour, Value: same},
			Point{Line: "cheapest on-demand allowed", At: u.Hour, Value: cheap})
	}
	for _, e := range ac.egress {
		if g, ok := gpuOf[[3]string{e.key.Workload, e.key.Location, e.key.Market}]; ok {
			e.key.GPU = g // the model that ran there, where the workload allows several
		}
		if o.Filter.keep(GPU, e.key.GPU) {
			group(e.key).egress += e.usd
		}
	}
	res := &Result{Title: "Savings against on-demand, net of the arbitrage's egress, " + o.Window.String(),
		Columns: append(byColumns(o.By), "usd", "gpu_hours", "egress_usd", "on_demand_same_usd", "saving_same_usd",
			"cheapest_on_demand_usd", "saving_cheapest_usd", "basis"),
		Notes: []string{basisNote(o), "saving_*: the on-demand cost less what was paid (usd) and less egress_usd, " +
			"the egress of the weights the arbiter's own moves pulled (replicas x weights_gb x the destination's egress_per_gb)"}}
	var t savingsAgg
	for _, id := range sortedKeys(groups) {
		a := groups[id]
		r := a.row(dimsRow(o.By, a.vals))
		res.Rows = append(res.Rows, r)
		t.usd, t.gpuh, t.same, t.cheapest, t.egress = t.usd+a.usd, t.gpuh+a.gpuh, t.same+a.same, t.cheapest+a.cheapest, t.egress+a.egress
		t.basis.billed, t.basis.all = t.basis.billed+a.basis.billed, t.basis.all+a.basis.all
	}
	if len(o.By) > 0 {
		res.Total = t.row(cli.Row{string(o.By[0]): "TOTAL"})
	}
	for _, m := range sortedKeys(missing) {
		res.Notes = append(res.Notes, "no on-demand list price for "+m+": no saving is claimed there")
	}
	res.Notes = append(res.Notes, ac.note())
	res.Series = NewSeries("USD", o.Window, bucketOf(o.Window), pts)
	return res, nil
}

// savingsAgg is one group's spend, GPU-hours, on-demand prices of them and arbitrage egress.
type savingsAgg struct {
	vals                              []string
	usd, gpuh, same, cheapest, egress float64
	basis                             basisCount
}

func (a *savingsAgg) row(r cli.Row) cli.Row {
	r["usd"] = round(a.usd, 2)
	r["gpu_hours"] = round(a.gpuh, 3)
	r["egress_usd"] = round(a.egress, 2)
	r["on_demand_same_usd"] = round(a.same, 2)
	r["saving_same_usd"] = round(a.same-a.usd-a.egress, 2)
	r["cheapest_on_demand_usd"] = round(a.cheapest, 2)
	r["saving_cheapest_usd"] = round(a.cheapest-a.usd-a.egress, 2)
	r["basis"] = a.basis.label()
	return r
}

// arbitrage is what moving capacity around cost: moves for a cheaper offer, the egress of the
// weights each moved replica pulled (by where it went), and hedging launches.
type arbitrage struct {
	Moves, MovedReplicas, Hedges int64
	EgressUSD                    float64
	egress                       []keyedUSD
}

// keyedUSD is an amount spent by one workload at one location, market and GPU model.
type keyedUSD struct {
	key Key
	usd float64
}

// arbitrageLookback is how long before it is applied an action's plan is looked for: an action
// held for approval is applied when a person says so.
const arbitrageLookback = 30 * 24 * time.Hour

func (a arbitrage) note() string {
	return fmt.Sprintf("arbitrage cost: %d moves (%d replicas, $%.2f egress of weights, taken off the savings), %d hedging launches",
		a.Moves, a.MovedReplicas, a.EgressUSD, a.Hedges)
}

// arbitrageCost counts the window's moves for price and hedges, and the egress of the weights
// the moves pulled. An action.updated's replicas are what the action set its group to, not what
// it launched: what a launch added is its delta in the plan.decided that proposed it (decided up
// to arbitrageLookback before the window). A launch whose plan is not in the history is counted
// at its group's count, as before plan.decided carried deltas.
func arbitrageCost(ctx context.Context, q Querier, o Options) (arbitrage, error) {
	rows, err := queryRows[struct {
		Workload string `json:"workload"`
		Location string `json:"location"`
		Market   string `json:"market"`
		Reason   string `json:"reason"`
		Actions  int64  `json:"actions"`
		Replicas int64  `json:"replicas"`
	}](ctx, q, fmt.Sprintf(`SELECT u.workload AS workload, u.location AS location, u.market AS market, u.reason AS reason,
		    count() AS actions, sum(if(d.action_id = '', u.replicas, d.delta)) AS replicas
		FROM (SELECT workload, location, argMax(market, at) AS market, action_id, reason, argMax(replicas, at) AS replicas FROM %s
		      WHERE status = 'applied' AND kind = 'launch' AND reason IN ('cheaper_offer', 'hedge')
		        AND at >= %s AND at < %s AND %s
		      GROUP BY workload, action_id, location, reason) AS u
		LEFT JOIN (SELECT a.id AS action_id, max(a.delta) AS delta FROM %s ARRAY JOIN actions AS a
		      WHERE at >= %s AND at < %s AND a.kind = 'launch' GROUP BY action_id) AS d ON u.action_id = d.action_id
		GROUP BY workload, location, market, reason`,
		q.Table("action_updated"), ms64(o.Window.Since), ms64(o.Window.Until),
		where(o.Filter, map[Dim]string{Workload: "workload", Location: "location", Market: "market"}),
		q.Table("plan_decided"), ms64(o.Window.Since.Add(-arbitrageLookback)), ms64(o.Window.Until)))
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
		if !wok || !lok {
			continue
		}
		k := Key{Workload: r.Workload, Location: r.Location, Provider: l.Provider, Market: r.Market}
		if len(w.GPU.Models) == 1 {
			k.GPU = w.GPU.Models[0]
		}
		if !o.Filter.keep(Provider, k.Provider) || !o.Filter.keep(Region, l.Region) || !o.Filter.keep(Team, w.Team) {
			continue
		}
		usd := float64(r.Replicas) * w.WeightsGB * l.EgressPerGB
		a.EgressUSD += usd
		a.egress = append(a.egress, keyedUSD{k, usd})
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
