package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// focusColumns are the FOCUS columns Bursar's export holds beyond the mandatory ones (every
// conditional and recommended column it has data for, the commitment columns null except on
// reserved capacity), then its own x_ columns: token counts and the keys it records spend by.
var focusColumns = []string{
	"AvailabilityZone", "BillingAccountType", "ChargeFrequency", "CommitmentDiscountCategory", "CommitmentDiscountId",
	"CommitmentDiscountName", "CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType",
	"CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractedUnitPrice", "ListUnitPrice",
	"PricingCategory", "RegionId", "RegionName", "ResourceId", "ResourceName", "ResourceType",
	"ServiceSubcategory", "SkuId", "SkuPriceId", "SubAccountId", "SubAccountName", "Tags",
	"x_Workload", "x_Location", "x_Market", "x_GPUModel", "x_ReplicaHours",
	"x_PromptTokens", "x_GenerationTokens", "x_Requests",
}

// pricingCategory maps a market to FOCUS's PricingCategory.
var pricingCategory = map[string]string{"spot": "Dynamic", "on_demand": "Standard", "reserved": "Committed"}

// FOCUSColumns are the export's columns in order: FOCUS's mandatory ones, then focusColumns.
func FOCUSColumns() []string { return append(billing.MandatoryColumns(), focusColumns...) }

// FOCUS is `report focus`: a FOCUS cost and usage dataset (billing.Version) for the window (a billing period,
// normally a month), one row per day, workload, location, market and GPU model. GPU-hours are
// the consumed and pricing quantity; tokens served ride in x_ columns, shared between a day's rows
// of one workload and location in proportion to their replica-hours. ListCost is the on-demand
// list price of the same GPU-hours at the same location where the fleet file and a price say so,
// else the billed cost.
func FOCUS(ctx context.Context, q Querier, o Options) (*Result, error) {
	o.By = nil
	us, err := loadUsage(ctx, q, o, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	toks, err := loadTokens(ctx, q, o, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	ps, err := onDemandPrices(ctx, q, o.Window.Until)
	if err != nil {
		return nil, err
	}
	days := dailyUsage(us)
	shareTokens(days, toks)
	res := &Result{Title: "FOCUS " + billing.Version + " cost and usage, " + o.Window.String(), Columns: FOCUSColumns()}
	unset := map[string]bool{}
	for _, d := range days {
		res.Rows = append(res.Rows, focusRow(d, o, ps))
		if l, ok := fleetLocation(o, d.Location); !ok || len(l.AccountIDs) == 0 {
			unset[d.Location] = true
		}
	}
	for _, l := range sortedKeys(unset) {
		res.Notes = append(res.Notes, "location "+l+" has no account_ids in the fleet file: its BillingAccountId is the location's name")
	}
	return res, nil
}

// focusDay is one key's usage on one day, with its share of the tokens served.
type focusDay struct {
	Usage
	prompt, gen, requests int64
}

func dailyUsage(us []Usage) []*focusDay {
	m := map[usageKey]*focusDay{}
	for _, u := range us {
		day := u.Hour.Truncate(24 * time.Hour)
		k := usageKey{u.Key, day.Unix()}
		d := m[k]
		if d == nil {
			d = &focusDay{Usage: Usage{Key: u.Key, Hour: day}}
			m[k] = d
		}
		d.add(u.USD, u.GPUHours, u.ReplicaHours)
	}
	out := make([]*focusDay, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Hour.Equal(out[j].Hour) {
			return out[i].Hour.Before(out[j].Hour)
		}
		return keyLess(out[i].Key, out[j].Key)
	})
	return out
}

// shareTokens gives each day's rows of a workload and location their share of its tokens, in
// whole tokens, the remainder to the last row so the shares add up.
func shareTokens(days []*focusDay, toks []tokenUse) {
	type wl struct {
		workload, location string
		day                int64
	}
	sums := map[wl][3]int64{}
	for _, t := range toks {
		k := wl{t.Workload, t.Location, time.Unix(t.Hour, 0).UTC().Truncate(24 * time.Hour).Unix()}
		s := sums[k]
		sums[k] = [3]int64{s[0] + t.Prompt, s[1] + t.Gen, s[2] + t.Requests}
	}
	rows := map[wl][]*focusDay{}
	for _, d := range days {
		k := wl{d.Workload, d.Location, d.Hour.Unix()}
		rows[k] = append(rows[k], d)
	}
	for k, ds := range rows {
		var hours float64
		for _, d := range ds {
			hours += d.ReplicaHours
		}
		s, left := sums[k], sums[k]
		for i, d := range ds {
			if i == len(ds)-1 {
				d.prompt, d.gen, d.requests = left[0], left[1], left[2]
				break
			}
			f := ratio(d.ReplicaHours, hours)
			d.prompt, d.gen, d.requests = int64(f*float64(s[0])), int64(f*float64(s[1])), int64(f*float64(s[2]))
			left = [3]int64{left[0] - d.prompt, left[1] - d.gen, left[2] - d.requests}
		}
	}
}

func focusRow(d *focusDay, o Options, ps []listPrice) cli.Row {
	iso := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
	start, end := maxTime(d.Hour, o.Window.Since), minTime(d.Hour.Add(24*time.Hour), o.Window.Until)
	list, listUnit := d.USD, ratio(d.USD, d.GPUHours)
	region := o.region(d.Location)
	account, zone := d.Location, ""
	if l, ok := fleetLocation(o, d.Location); ok {
		if p := cheapestAt(ps, l, d.GPU); !math.IsNaN(p) {
			list, listUnit = d.GPUHours*p, p
		}
		if len(l.AccountIDs) > 0 {
			account = l.AccountIDs[0]
		}
		if len(l.Zones) == 1 {
			zone = l.Zones[0]
		}
	}
	sku := d.GPU + "/" + d.Market
	r := cli.Row{
		"AvailabilityZone": zone, "BilledCost": round(d.USD, 6), "BillingAccountId": account, "BillingAccountName": d.Provider + " " + account,
		"BillingAccountType": "", "BillingCurrency": "USD", "BillingPeriodStart": iso(o.Window.Since), "BillingPeriodEnd": iso(o.Window.Until),
		"ChargeCategory": "Usage", "ChargeClass": "", "ChargeFrequency": "Usage-Based",
		"ChargeDescription": fmt.Sprintf("%s on %s GPUs (%s) at %s", d.Workload, d.GPU, d.Market, d.Location),
		"ChargePeriodStart": iso(start), "ChargePeriodEnd": iso(end),
		"ContractedCost": round(d.USD, 6), "EffectiveCost": round(d.USD, 6), "ListCost": round(list, 6),
		"ContractedUnitPrice": round(ratio(d.USD, d.GPUHours), 6), "ListUnitPrice": round(listUnit, 6),
		"InvoiceIssuerName": d.Provider, "ProviderName": d.Provider, "PublisherName": d.Provider,
		"PricingCategory": pricingCategory[d.Market], "PricingQuantity": round(d.GPUHours, 6), "PricingUnit": "GPU-Hours",
		"ConsumedQuantity": round(d.GPUHours, 6), "ConsumedUnit": "GPU-Hours",
		"RegionId": region, "RegionName": region,
		"ResourceId": d.Workload + "@" + d.Location + "/" + d.Market + "/" + d.GPU, "ResourceName": d.Workload + " at " + d.Location,
		"ResourceType": "GPU replicas", "ServiceCategory": "Compute", "ServiceSubcategory": "Virtual Machines",
		"ServiceName": "GPU compute", "SkuId": sku, "SkuPriceId": d.Location + "/" + sku, "SubAccountId": "", "SubAccountName": "",
		"Tags":       focusTags(d, o),
		"x_Workload": d.Workload, "x_Location": d.Location, "x_Market": d.Market, "x_GPUModel": d.GPU,
		"x_ReplicaHours": round(d.ReplicaHours, 6), "x_PromptTokens": d.prompt, "x_GenerationTokens": d.gen,
		"x_Requests": d.requests,
	}
	for _, c := range []string{"CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
		"CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType", "CommitmentDiscountUnit"} {
		r[c] = ""
	}
	if d.Market == "reserved" { // FOCUS asks for the commitment that priced it
		r["CommitmentDiscountCategory"], r["CommitmentDiscountStatus"] = "Usage", "Used"
		r["CommitmentDiscountId"] = d.Location + "/" + d.GPU + "/reserved"
		r["CommitmentDiscountName"] = "reserved " + d.GPU + " capacity at " + d.Location
		r["CommitmentDiscountType"] = "Reserved capacity"
		r["CommitmentDiscountQuantity"], r["CommitmentDiscountUnit"] = round(d.GPUHours, 6), "GPU-Hours"
	}
	return r
}

// focusTags are the row's Tags: its workload, location and market, and the workload's team
// from the fleet file.
func focusTags(d *focusDay, o Options) string {
	tags := map[string]string{"workload": d.Workload, "location": d.Location, "market": d.Market}
	if o.Fleet != nil {
		if w, ok := o.Fleet.Workload(d.Workload); ok && w.Team != "" {
			tags["team"] = w.Team
		}
	}
	b, _ := json.Marshal(tags)
	return string(b)
}

func fleetLocation(o Options, name string) (*fleet.Location, bool) {
	if o.Fleet == nil {
		return nil, false
	}
	return o.Fleet.Location(name)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
