package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// DefaultOutputWeight is how many times an input token's cost an output token is taken to cost
// when spend is split between input and output: generating a token takes a forward pass of its
// own, reading one is a slice of a batched prefill.
const DefaultOutputWeight = 4

// TokenOptions adds the input/output split to Options.
type TokenOptions struct {
	Options
	// OutputWeight is the cost of an output token in input tokens; 0 means DefaultOutputWeight.
	OutputWeight float64
}

// tokenUse is what one workload at one location served in one hour.
type tokenUse struct {
	Workload  string `json:"workload"`
	Location  string `json:"location"`
	Hour      int64  `json:"hour"`
	StepStart int64  `json:"step_start"`
	Prompt    int64  `json:"prompt"`
	Gen       int64  `json:"gen"`
	Requests  int64  `json:"requests"`
}

var tokenCols = map[Dim]string{Workload: "workload", Location: "location"}

// loadTokens returns the tokens served in the window by workload, location and hour: whole hours
// from the tokens rollup, the edges from the counters' increases in tokens_sample, summed in steps
// of step (Hour is the step's start).
func loadTokens(ctx context.Context, q Querier, o Options, step time.Duration) ([]tokenUse, error) {
	sec := int64(step.Seconds())
	w := o.Window
	lo, hi := hourCeil(w.Since), hourFloor(w.Until)
	var out []tokenUse
	edge := func(a, b time.Time) error {
		rows, err := queryRows[tokenUse](ctx, q, fmt.Sprintf(`SELECT workload, location,
			intDiv(toUnixTimestamp(toStartOfHour(at)), %d) * %d AS hour, sum(delta_prompt_tokens) AS prompt,
			sum(delta_generation_tokens) AS gen, sum(delta_requests) AS requests
			FROM %s WHERE at >= %s AND at < %s AND %s GROUP BY workload, location, hour`,
			sec, sec, q.Table("tokens_sample"), ms64(a), ms64(b), where(o.Filter, tokenCols)))
		out = append(out, rows...)
		return err
	}
	if lo.After(hi) {
		if err := edge(w.Since, w.Until); err != nil {
			return nil, fmt.Errorf("reading token counters: %w", err)
		}
		return out, nil
	}
	rows, err := queryRows[tokenUse](ctx, q, fmt.Sprintf(`SELECT workload, location,
		intDiv(toUnixTimestamp(hour), %d) * %d AS step_start, sum(prompt_tokens) AS prompt,
		sum(generation_tokens) AS gen, sum(requests) AS requests
		FROM %s WHERE hour >= %s AND hour < %s AND %s GROUP BY workload, location, step_start`,
		sec, sec, q.Table("tokens_hourly"), hourLit(lo), hourLit(hi), where(o.Filter, tokenCols)))
	if err != nil {
		return nil, fmt.Errorf("reading the tokens rollup: %w", err)
	}
	for i := range rows {
		rows[i].Hour = rows[i].StepStart
	}
	out = append(out, rows...)
	for _, e := range [][2]time.Time{{w.Since, lo}, {hi, w.Until}} {
		if e[0].Before(e[1]) {
			if err := edge(e[0], e[1]); err != nil {
				return nil, fmt.Errorf("reading token counters: %w", err)
			}
		}
	}
	return out, nil
}

// Tokens is `report tokens`: tokens served and what they cost per million, blended and split into
// input and output, by workload, location, region or team as counted, and by provider, market or
// GPU type as attributed to what ran (attribute).
func Tokens(ctx context.Context, q Querier, o TokenOptions) (*Result, error) {
	weight := o.OutputWeight
	if weight <= 0 {
		weight = DefaultOutputWeight
	}
	split := splitsTokens(o.Options)
	uo := o.Options
	if split {
		uo = withoutOfferFilter(o.Options)
	}
	toks, err := loadTokens(ctx, q, uo, bucketOf(o.Window))
	if err != nil {
		return nil, err
	}
	cols := usageCols(uo, Workload, Location) // tokens as counted are by workload and location
	if split {
		cols = allCols // split among the offers that ran
	}
	us, err := costUsage(ctx, q, uo, bucketOf(o.Window), cols)
	if err != nil {
		return nil, err
	}
	// ClickHouse returns groups in no set order, and the split sums fractions of them in the
	// order read: sorted first, the same history gives the same figures to the token.
	slices.SortFunc(toks, compareTokenUse)
	slices.SortFunc(us, compareUsage)
	shares := wholeShares(toks)
	if split {
		shares = attribute(toks, us, o.rate)
	}
	type agg struct {
		vals                   []string
		prompt, gen, req, cost float64
		basis                  basisCount
	}
	groups := map[string]*agg{}
	var order []string
	get := func(k Key) *agg {
		vals := make([]string, len(o.By))
		for i, d := range o.By {
			vals[i] = k.dim(d, o.Options)
		}
		id := strings.Join(vals, "\x00")
		if groups[id] == nil {
			groups[id] = &agg{vals: vals}
			order = append(order, id)
		}
		return groups[id]
	}
	var pts []Point
	for _, t := range shares {
		if !o.Filter.keep(Region, o.region(t.Location)) || !o.Filter.keep(Team, o.team(t.Workload)) ||
			split && !o.Filter.keepOffer(t.Key) {
			continue
		}
		a := get(t.Key)
		a.prompt += t.prompt
		a.gen += t.gen
		a.req += t.req
		pts = append(pts, Point{Line: label(a.vals), At: time.Unix(t.hour, 0), Value: t.prompt + t.gen})
	}
	for _, u := range us {
		switch {
		case split && !o.Filter.keepOffer(u.Key): // loadUsage kept the region and team asked for
			continue
		case !split:
			u.Key = Key{Workload: u.Workload, Location: u.Location}
		}
		a := get(u.Key)
		a.cost += u.USD
		a.basis.add(u)
	}
	res := &Result{Title: "Tokens and cost per million tokens, " + o.Window.String(),
		Columns: append(byColumns(o.By), "prompt_tokens", "generation_tokens", "tokens", "requests", "usd",
			"usd_per_m_tokens", "usd_per_m_input", "usd_per_m_output", "basis"),
		Notes: []string{fmt.Sprintf("input/output split weights an output token as %g input tokens", weight), basisNote(o.Options)}}
	if split {
		res.Notes = append(res.Notes, attributionNote(o.Fleet != nil))
	}
	sortStrings(order)
	var total agg
	for _, id := range order {
		a := groups[id]
		r := tokenRow(dimsRow(o.By, a.vals), a.prompt, a.gen, a.req, a.cost, weight)
		r["basis"] = a.basis.label()
		res.Rows = append(res.Rows, r)
		total.prompt, total.gen, total.req, total.cost = total.prompt+a.prompt, total.gen+a.gen, total.req+a.req, total.cost+a.cost
		total.basis.billed, total.basis.all = total.basis.billed+a.basis.billed, total.basis.all+a.basis.all
	}
	if len(o.By) > 0 {
		res.Total = tokenRow(cli.Row{string(o.By[0]): "TOTAL"}, total.prompt, total.gen, total.req, total.cost, weight)
		res.Total["basis"] = total.basis.label()
	}
	res.Series = NewSeries("Tokens", o.Window, bucketOf(o.Window), pts)
	return res, nil
}

func compareTokenUse(a, b tokenUse) int {
	return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Location, b.Location), cmp.Compare(a.Hour, b.Hour),
		cmp.Compare(a.Prompt, b.Prompt), cmp.Compare(a.Gen, b.Gen), cmp.Compare(a.Requests, b.Requests))
}

func compareUsage(a, b Usage) int {
	return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Location, b.Location), cmp.Compare(a.Provider, b.Provider),
		cmp.Compare(a.Market, b.Market), cmp.Compare(a.GPU, b.GPU), a.Hour.Compare(b.Hour),
		cmp.Compare(a.ReplicaHours, b.ReplicaHours), cmp.Compare(a.USD, b.USD))
}

// attributionNote says how tokens were split among what ran.
func attributionNote(rated bool) string {
	if rated {
		return "tokens by provider, market or GPU are split among the replicas ready in each hour, weighted by each GPU type's per-replica rate in the fleet file (every replica alike where it states none)"
	}
	return "tokens by provider, market or GPU are split among the replicas ready in each hour, every replica alike (give --fleet to weigh them by each GPU type's rate)"
}

// tokenRow prices tokens: blended is cost per million of all tokens; the split gives output
// tokens weight times an input token's share of the cost.
func tokenRow(r cli.Row, prompt, gen, req, cost, weight float64) cli.Row {
	r["prompt_tokens"] = int64(prompt)
	r["generation_tokens"] = int64(gen)
	r["tokens"] = int64(prompt + gen)
	r["requests"] = int64(req)
	r["usd"] = round(cost, 2)
	r["usd_per_m_tokens"] = round(ratio(cost, prompt+gen)*1e6, 4)
	perInput := ratio(cost, prompt+weight*gen) // the cost of one input token
	r["usd_per_m_input"] = round(perInput*1e6, 4)
	r["usd_per_m_output"] = round(perInput*weight*1e6, 4)
	return r
}
