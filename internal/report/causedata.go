package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// priceObs is one price_observed of an offer a plan moved to.
type priceObs struct {
	ID       string  `json:"id"`
	AtMS     int64   `json:"at_ms"`
	Provider string  `json:"provider"`
	Region   string  `json:"region"`
	Zone     string  `json:"zone"`
	Type     string  `json:"instance_type"`
	Market   string  `json:"market"`
	USD      float64 `json:"usd_per_hour"`
	Source   string  `json:"source"`
}

// offerParts splits an offer id as the arbiter writes it, "location/zone/instance-type/market"
// (zone "-" for none).
func offerParts(offer string) (location, zone, typ, market string, ok bool) {
	p := strings.Split(offer, "/")
	if len(p) != 4 {
		return "", "", "", "", false
	}
	if p[1] == "-" {
		p[1] = ""
	}
	return p[0], p[1], p[2], p[3], true
}

// loadPriceChanges reads the prices of the offers plans moved to, from two lookbacks before the
// first plan (so a change has the observation before it) to the last.
func loadPriceChanges(ctx context.Context, q Querier, ps []*plan) ([]priceObs, error) {
	types, markets := map[string]bool{}, map[string]bool{}
	for _, p := range ps {
		for _, o := range p.movedTo() {
			if _, _, typ, m, ok := offerParts(o); ok {
				types[typ], markets[m] = true, true
			}
		}
	}
	if len(types) == 0 {
		return nil, nil
	}
	lo, hi := span(ps)
	rows, err := queryRows[priceObs](ctx, q, fmt.Sprintf(`SELECT id, toUnixTimestamp64Milli(at) AS at_ms, provider, region,
		zone, instance_type, market, usd_per_hour, source FROM %s
		WHERE instance_type IN (%s) AND market IN (%s) AND at >= %s AND at <= %s ORDER BY at_ms, id LIMIT 1 BY id`,
		q.Table("price_observed"), lits(sortedKeys(types)), lits(sortedKeys(markets)),
		ms64(time.UnixMilli(lo).Add(-2*priceLookback)), ms64(time.UnixMilli(hi))))
	if err != nil {
		return nil, fmt.Errorf("reading the prices of offers moved to: %w", err)
	}
	return rows, nil
}

// priceCause is the latest change of price, within priceLookback before the plan, of an offer its
// cheaper_offer launches moved to. An offer's location is matched to the price's provider and
// region through the fleet file when the request carries it; without it, zone, instance type and
// market must do.
func priceCause(o Options, p *plan, obs []priceObs) (cause, bool) {
	var best cause
	for _, offer := range p.movedTo() {
		loc, zone, typ, market, ok := offerParts(offer)
		if !ok {
			continue
		}
		region, provider := o.region(loc), ""
		if region != "" {
			provider = o.provider(loc)
		}
		prev := map[string]priceObs{} // by provider/region: each series' previous observation
		for _, x := range obs {
			if x.AtMS > p.AtMS || x.Zone != zone || x.Type != typ || x.Market != market ||
				region != "" && (x.Region != region || x.Provider != provider) {
				continue
			}
			key := x.Provider + "/" + x.Region
			before, seen := prev[key]
			prev[key] = x
			if !seen || before.USD == x.USD || x.AtMS < p.AtMS-priceLookback.Milliseconds() || x.AtMS < best.AtMS {
				continue
			}
			best = cause{Kind: "price_observed", ID: x.ID, AtMS: x.AtMS, Detail: fmt.Sprintf("%s: $%s/h to $%s/h (%s %s, %s)",
				offer, cellText(round(before.USD, 4)), cellText(round(x.USD, 4)), x.Provider, x.Region, x.Source)}
		}
	}
	return best, best.Kind != ""
}

// tokenMinute is the tokens a workload served in one minute (by the samples closing in it).
type tokenMinute struct {
	Workload string `json:"workload"`
	Minute   int64  `json:"minute"`
	Tokens   int64  `json:"tokens"`
	LastMS   int64  `json:"last_ms"`
}

// demandMinutes are the minutes a demand plan's cause reads: the two lookbacks before its minute.
func (p *plan) demandMinutes() []int64 {
	if !slices.ContainsFunc(p.reasons(), func(r string) bool {
		return r == string(placement.ReasonDemandUp) || r == string(placement.ReasonDemandDown)
	}) {
		return nil
	}
	n := int64(2 * demandLookback / time.Minute)
	m := p.AtMS / 60000
	out := make([]int64, 0, n)
	for i := m - n; i < m; i++ {
		out = append(out, i)
	}
	return out
}

func loadTokenMinutes(ctx context.Context, q Querier, ps []*plan) ([]tokenMinute, error) {
	var keys []string
	ws := map[string]bool{}
	for _, p := range ps {
		for _, m := range p.demandMinutes() {
			keys, ws[p.Workload] = append(keys, fmt.Sprintf("(%s, %d)", lit(p.Workload), m)), true
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	lo, hi := span(ps)
	rows, err := queryRows[tokenMinute](ctx, q, fmt.Sprintf(`SELECT workload, intDiv(toUnixTimestamp64Milli(at), 60000) AS minute,
		toInt64(sum(delta_prompt_tokens + delta_generation_tokens)) AS tokens, toUnixTimestamp64Milli(max(at)) AS last_ms
		FROM (SELECT * FROM %s WHERE workload IN (%s) AND at >= %s AND at < %s LIMIT 1 BY id)
		WHERE (toString(workload), minute) IN (%s) GROUP BY workload, minute`,
		q.Table("tokens_sample"), lits(sortedKeys(ws)), ms64(time.UnixMilli(lo).Add(-2*demandLookback-time.Minute)),
		ms64(time.UnixMilli(hi)), strings.Join(keys, ", ")))
	if err != nil {
		return nil, fmt.Errorf("reading the token rates before demand plans: %w", err)
	}
	return rows, nil
}

// demandCause is the workload's token rate over the lookback before the plan's minute, beside
// the lookback before that, so the change the arbiter answered shows.
func demandCause(p *plan, dm []tokenMinute) (cause, bool) {
	ms := p.demandMinutes()
	if len(ms) == 0 {
		return cause{}, false
	}
	half := ms[len(ms)/2]
	var recent, earlier, last int64
	found := false
	for _, d := range dm {
		if d.Workload != p.Workload || d.Minute < ms[0] || d.Minute > ms[len(ms)-1] {
			continue
		}
		if d.Minute >= half {
			recent, found, last = recent+d.Tokens, true, max(last, d.LastMS)
		} else {
			earlier += d.Tokens
		}
	}
	if !found {
		return cause{}, false
	}
	s := demandLookback.Seconds()
	return cause{Kind: "tokens_sample", AtMS: last, Detail: fmt.Sprintf("%s: %s tokens/s in the %s before, %s tokens/s in the %s before that",
		p.Workload, cellText(round(float64(recent)/s, 1)), demandLookback, cellText(round(float64(earlier)/s, 1)), demandLookback)}, true
}
