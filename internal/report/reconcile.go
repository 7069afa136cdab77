package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// fleetLocator places charges at bursar.yaml's locations.
type fleetLocator struct{ cfg *fleet.Config }

var _ billing.Locator = fleetLocator{}

// Locate finds the one location whose provider, region, zones and account ids the charge
// matches. A charge without a region (tax, some credits) matches when only one location of its
// provider and account does.
func (f fleetLocator) Locate(c billing.Charge) (string, bool) {
	if f.cfg == nil {
		return "", false
	}
	provider := billing.ProviderKey(c.Provider)
	var found []string
	for _, l := range f.cfg.Locations {
		if l.Provider != provider || (c.Region != "" && l.Region != c.Region) {
			continue
		}
		if c.Zone != "" && len(l.Zones) > 0 && !slices.Contains(l.Zones, c.Zone) {
			continue
		}
		if len(l.AccountIDs) > 0 && !slices.Contains(l.AccountIDs, c.BillingAccountID) && !slices.Contains(l.AccountIDs, c.SubAccountID) {
			continue
		}
		found = append(found, l.Name)
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}

// Workload reports whether bursar.yaml names the workload.
func (f fleetLocator) Workload(name string) bool {
	if f.cfg == nil {
		return false
	}
	_, ok := f.cfg.Workload(name)
	return ok
}

// instanceType is the instance type in an offer id (location/zone/instance type/market).
func instanceType(offer string) string {
	if p := strings.Split(offer, "/"); len(p) == 4 {
		return p[2]
	}
	return ""
}

// offerEstimates is the estimated cost in the window by workload, location, instance type and
// hour: the replica_state intervals that overlap it and the intervals still open, up to Now.
func offerEstimates(ctx context.Context, q Querier, o Options) ([]billing.Estimate, error) {
	w := o.Window
	ivs, err := queryRows[interval](ctx, q, fmt.Sprintf(`SELECT workload, location, provider, market, gpu_model AS gpu,
		offer AS offer_id, gpus_per_replica AS gpus, prev_ready AS ready, prev_usd_per_hour AS usd,
		toUnixTimestamp64Milli(prev_at) AS from_ms, toUnixTimestamp64Milli(at) AS to_ms
		FROM %s WHERE prev_ready > 0 AND at > prev_at AND at > %s AND prev_at < %s AND %s`,
		q.Table("replica_state"), ms64(w.Since), ms64(w.Until), where(o.Filter, costCols)))
	if err != nil {
		return nil, fmt.Errorf("reading replica intervals: %w", err)
	}
	if end := o.end(); end.After(w.Since) {
		open, err := openIntervals(ctx, q, o.Filter, end)
		if err != nil {
			return nil, err
		}
		for _, iv := range open {
			iv.ToMS = end.UnixMilli()
			ivs = append(ivs, iv)
		}
	}
	acc := map[billing.Estimate]float64{}
	for _, iv := range ivs {
		spreadHours(iv, w, func(hour time.Time, usd float64) {
			acc[billing.Estimate{Workload: iv.Workload, Location: iv.Location, InstanceType: instanceType(iv.Offer), Hour: hour}] += usd
		})
	}
	out := make([]billing.Estimate, 0, len(acc))
	for e, usd := range acc {
		e.USD = usd
		out = append(out, e)
	}
	return out, nil
}

// spreadHours calls add with the cost of the part of iv inside w in each hour.
func spreadHours(iv interval, w Window, add func(time.Time, float64)) {
	acc := &usageAcc{m: map[usageKey]*Usage{}, step: time.Hour}
	iv.spread(acc, w.Since, w.Until)
	for _, u := range acc.m {
		add(u.Hour, u.USD)
	}
}

// reconciled is the window's billed charges matched to the estimates.
type reconciled struct {
	lines   []billing.Line
	charges []billing.Charge
	matched billing.Matched
}

// reconcileLines matches the billed charges in the window (the part of each inside it) to the
// estimates and to the instances the replicas ran on. The match sees every workload's estimates
// whatever the filter: a charge is shared among all that ran there, and the caller keeps the
// lines it wants. Charges billed in a currency other than USD are refused (ErrCurrency).
func reconcileLines(ctx context.Context, q Querier, o Options) (*reconciled, error) {
	loaded, err := loadCharges(ctx, q, o.Window)
	if err != nil {
		return nil, err
	}
	charges := loaded[:0]
	for _, c := range loaded {
		if in, ok := c.Within(o.Window.Since, o.Window.Until); ok {
			charges = append(charges, in)
		}
	}
	if err := usdOnly(charges); err != nil {
		return nil, err
	}
	all := o
	all.Filter = nil
	est, err := offerEstimates(ctx, q, all)
	if err != nil {
		return nil, err
	}
	held, err := holdings(ctx, q, o.Window, o.end())
	if err != nil {
		return nil, err
	}
	lines, matched := billing.Reconcile(charges, est, held, fleetLocator{o.Fleet})
	return &reconciled{lines: lines, charges: charges, matched: matched}, nil
}

// end is where the window's open intervals end: its end, or now when that is earlier.
func (o Options) end() time.Time {
	if !o.Now.IsZero() && o.Now.Before(o.Window.Until) {
		return o.Now
	}
	return o.Window.Until
}

// Reconcile is `report reconcile`: per day, workload and location, Bursar's estimate beside the
// billed cost (BilledCost and EffectiveCost) of the charges matched to it, the difference and
// its known causes; credits, tax, unused commitments and billed usage Bursar does not know about
// are lines of their own.
func Reconcile(ctx context.Context, q Querier, o Options) (*Result, error) {
	rec, err := reconcileLines(ctx, q, o)
	if err != nil {
		return nil, err
	}
	lines, charges := rec.lines, rec.charges
	res := &Result{Title: "Estimated and billed cost, " + o.Window.String(),
		Columns: []string{"day", "workload", "location", "estimated_usd", "billed_cost", "effective_cost", "difference", "commitment", "causes"},
		Notes: []string{"difference = effective_cost (FOCUS EffectiveCost, amortized) - estimated_usd; " +
			"commitment = what commitment discounts changed EffectiveCost by against ContractedCost"}}
	billedAt := map[string]bool{}
	for _, l := range lines {
		if l.Charges > 0 {
			billedAt[l.Location+l.Day.Format(time.DateOnly)] = true
		}
	}
	var total billing.Line
	for _, l := range lines {
		if !o.Filter.keep(Workload, l.Workload) || !o.Filter.keep(Location, l.Location) {
			continue
		}
		res.Rows = append(res.Rows, reconcileRow(cli.Row{"day": l.Day.Format(time.DateOnly), "workload": l.Workload, "location": l.Location},
			l, causes(l, billedAt[l.Location+l.Day.Format(time.DateOnly)])))
		total.Estimated, total.Billed, total.Effective = total.Estimated+l.Estimated, total.Billed+l.Billed, total.Effective+l.Effective
		total.Commitment += l.Commitment
	}
	res.Total = reconcileRow(cli.Row{"day": "TOTAL"}, total, "")
	if len(charges) == 0 {
		res.Notes = append(res.Notes, "no billed charges imported for this window: run report import-billing --focus FILE|DIR")
	} else {
		res.Notes = append(res.Notes, matchedNote(rec.matched))
	}
	return res, nil
}

// matchedNote counts the usage charges by the rule that matched them, all workloads included.
func matchedNote(m billing.Matched) string {
	return fmt.Sprintf("usage charges matched: %d by resource id, %d by tag, %d by location and SKU, %d by location, %d unmatched",
		m.ByResource, m.ByTag, m.BySKU, m.ByLocation, m.Unmatched)
}

func reconcileRow(r cli.Row, l billing.Line, why string) cli.Row {
	r["estimated_usd"] = round(l.Estimated, 2)
	r["billed_cost"] = round(l.Billed, 2)
	r["effective_cost"] = round(l.Effective, 2)
	r["difference"] = round(l.Difference(), 2)
	r["commitment"] = round(l.Commitment, 2)
	r["causes"] = why
	return r
}

// causes says what the difference on a line comes from, where the bill says.
func causes(l billing.Line, billedThere bool) string {
	switch l.Workload {
	case billing.Unmatched:
		return fmt.Sprintf("billed usage Bursar has no replica for (%d charges)", l.Charges)
	case billing.UnusedCommitment:
		return "unused commitment"
	case "(credits)", "(tax)", "(purchases)", "(adjustments)", "(other)":
		return strings.Trim(l.Workload, "()")
	}
	if l.Charges == 0 {
		if billedThere {
			return "no billed charge matched"
		}
		return "no billing imported for this location and day"
	}
	var parts []string
	if math.Abs(l.Commitment) >= 0.005 {
		parts = append(parts, fmt.Sprintf("commitment discount %+.2f", l.Commitment))
	}
	if rest := l.Difference() - l.Commitment; math.Abs(rest) >= 0.005 {
		parts = append(parts, fmt.Sprintf("price or usage %+.2f", rest))
	}
	var by []string
	for _, m := range []struct {
		n    int
		what string
	}{{l.ByResource, "resource id"}, {l.ByTag, "tag"}, {l.BySKU, "location and SKU"}, {l.ByLocation, "location"}} {
		if m.n > 0 {
			by = append(by, m.what)
		}
	}
	return strings.Join(append(parts, "matched by "+strings.Join(by, ", ")), "; ")
}

// ErrCurrency marks a reconcile or --basis billed refused because charges are billed in a
// currency other than USD, Bursar's estimates' currency.
var ErrCurrency = errors.New("billed in a currency other than USD")

// usdOnly refuses charges billed in another currency than USD: the estimates are in USD, and a
// FOCUS export carries no exchange rate for its BilledCost and EffectiveCost, so the two cannot
// be compared or added. The error names the first such charge's file, account and period.
func usdOnly(cs []billing.Charge) error {
	for _, c := range cs {
		if c.Currency != "USD" {
			return fmt.Errorf("%w: %s (%s billing account %s, period %s) is billed in %s; Bursar estimates in USD and "+
				"FOCUS exports carry no exchange rate for BilledCost and EffectiveCost, so they cannot be reconciled: export "+
				"that billing period in USD and import it (the newer export replaces this one), or use --basis estimated",
				ErrCurrency, c.File, billing.ProviderKey(c.Provider), c.BillingAccountID, c.PeriodStart.Format("2006-01"), c.Currency)
		}
	}
	return nil
}
