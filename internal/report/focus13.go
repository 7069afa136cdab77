package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/cli"
)

// marketplaceHosts are the marketplace clouds Bursar prices, with the name their rows give the
// host. On them independent hosts (Vast.ai's) or partner data centres and community hosts
// (RunPod's) rent their machines out under the marketplace's terms and on its invoice: the
// marketplace is the service provider and invoice issuer, the host is another entity, and Bursar's
// records do not say which one. Every other provider runs its own machines (FOCUS 1.3 appendix,
// "Participating Entity Identification Examples", scenario 1.1: service, host and invoice
// issuer are the cloud).
var marketplaceHosts = map[string]string{"vast": "vast host", "runpod": "runpod host"}

// focusEntities are a location's ServiceProviderName and HostProviderName, from its provider in
// the fleet file (as the replicas recorded it; ProviderName and InvoiceIssuerName hold it too).
func focusEntities(provider string) (service, host string) {
	if h, ok := marketplaceHosts[provider]; ok {
		return provider, h
	}
	return provider, provider
}

// AllocationMethod is the AllocatedMethodId of the 1.3 export's rows, documented in
// docs/reports.md: the GPU capacity of one type, market and location on one day (the origin
// charge, its ResourceId) is split among the workloads whose replicas ran on it, each by what
// its replicas' instances cost while they ran (offer price x ready time); GPU-hours where the
// day's capacity cost nothing.
const AllocationMethod = "bursar-replica-cost"

// resourceTags are the Tags that describe the shared capacity; the others (workload, team) are
// the allocated resource's, and go to AllocatedTags.
var resourceTags = []string{"location", "market"}

// allocatedElement is the one element of a row's AllocatedMethodDetails.
type allocatedElement struct {
	AllocatedRatio float64 `json:"AllocatedRatio"`
	UsageUnit      string  `json:"UsageUnit"`
	UsageQuantity  float64 `json:"UsageQuantity"`
}

// contractElement is the one element of a reserved row's ContractApplied.
type contractElement struct {
	ContractID           string  `json:"ContractID"`
	ContractCommitmentID string  `json:"ContractCommitmentID"`
	AppliedCost          float64 `json:"ContractCommitmentAppliedCost"`
	AppliedQuantity      float64 `json:"ContractCommitmentAppliedQuantity"`
	AppliedUnit          string  `json:"ContractCommitmentAppliedUnit"`
}

// FOCUSAs is `report focus`'s dataset (FOCUS's result, FOCUS 1.2: what the store's owner answers,
// whatever its release) in version. 1.2 is returned as it is. 1.3 keeps every 1.2 column and
// value except the resource and tag columns, and adds:
//   - ServiceProviderName and HostProviderName (focusEntities);
//   - split cost allocation: a row is the share of one day's GPU capacity of a type, market and
//     location (ResourceId location/market/GPU model, Tags its location and market) that one
//     workload used (AllocatedResourceId and AllocatedResourceName, 1.2's ResourceId and
//     ResourceName; AllocatedTags its workload and team), by AllocationMethod, the share and
//     GPU-hours in AllocatedMethodDetails;
//   - ContractApplied on reserved capacity: the reservation (its CommitmentDiscountId) as the
//     contract and its commitment, the row's cost and GPU-hours applied to it.
func FOCUSAs(version string, res *Result) (*Result, error) {
	s, err := focusSpecOf(version)
	if err != nil {
		return nil, err
	}
	if version == billing.Version {
		return res, nil
	}
	out := &Result{Title: strings.Replace(res.Title, "FOCUS "+billing.Version, "FOCUS "+version, 1),
		Columns: append(s.mandatory(), s.extra...), Notes: res.Notes}
	ratios := allocationRatios(res.Rows)
	for i, r := range res.Rows {
		row, err := focus13Row(r, ratios[i])
		if err != nil {
			return nil, fmt.Errorf("FOCUS %s row %d: %w", version, i+1, err)
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// originKey is the origin charge a 1.2 row is a share of: a day's capacity of one GPU type and
// market at one location.
func originKey(r cli.Row) string {
	return fmt.Sprint(r["ChargePeriodStart"], "|", r["x_Location"], "|", r["x_Market"], "|", r["x_GPUModel"])
}

// allocationRatios are each row's share of its origin charge: by BilledCost, by GPU-hours where
// the origin cost nothing, in equal parts where it ran nothing either. Shares are rounded to 6
// decimals, the last row of an origin taking what is left, so an origin's shares add up to 1.
func allocationRatios(rows []cli.Row) []float64 {
	groups := map[string][]int{}
	var order []string
	for i, r := range rows {
		k := originKey(r)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	out := make([]float64, len(rows))
	for _, k := range order {
		idx := groups[k]
		weight := func(i int) float64 { return cellFloat(rows[i]["BilledCost"]) }
		if sumOf(idx, weight) <= 0 {
			weight = func(i int) float64 { return cellFloat(rows[i]["ConsumedQuantity"]) }
		}
		if sumOf(idx, weight) <= 0 {
			weight = func(int) float64 { return 1 }
		}
		total, left := sumOf(idx, weight), 1.0
		for j, i := range idx {
			if j == len(idx)-1 {
				out[i] = round(left, 6)
				break
			}
			out[i] = round(weight(i)/total, 6)
			left -= out[i]
		}
	}
	return out
}

func sumOf(idx []int, f func(int) float64) float64 {
	var s float64
	for _, i := range idx {
		s += f(i)
	}
	return s
}

// focus13Row is a 1.2 row in 1.3; ratio is its share of its origin charge.
func focus13Row(r cli.Row, ratio float64) (cli.Row, error) {
	out := maps.Clone(r)
	out["ServiceProviderName"], out["HostProviderName"] = focusEntities(cellText(r["ProviderName"]))
	tags := map[string]string{}
	if t := cellText(r["Tags"]); t != "" {
		if err := json.Unmarshal([]byte(t), &tags); err != nil {
			return nil, fmt.Errorf("its Tags %.80q: %w", t, err)
		}
	}
	own := map[string]string{}
	for _, k := range resourceTags {
		if v, ok := tags[k]; ok {
			own[k] = v
			delete(tags, k)
		}
	}
	out["Tags"], out["AllocatedTags"] = objectCell(own), objectCell(tags)
	loc, market, gpu := cellText(r["x_Location"]), cellText(r["x_Market"]), cellText(r["x_GPUModel"])
	out["ResourceId"] = loc + "/" + market + "/" + gpu
	out["ResourceName"] = gpu + " " + market + " capacity at " + loc
	out["ResourceType"] = "GPU capacity"
	out["AllocatedMethodId"] = AllocationMethod
	out["AllocatedResourceId"], out["AllocatedResourceName"] = r["ResourceId"], r["ResourceName"]
	gpuHours := cellFloat(r["ConsumedQuantity"])
	out["AllocatedMethodDetails"] = compactJSON(map[string][]allocatedElement{
		"Elements": {{AllocatedRatio: ratio, UsageUnit: cellText(r["ConsumedUnit"]), UsageQuantity: gpuHours}}})
	out["ContractApplied"] = ""
	if id := cellText(r["CommitmentDiscountId"]); id != "" {
		out["ContractApplied"] = compactJSON(map[string][]contractElement{"Elements": {{ContractID: id, ContractCommitmentID: id,
			AppliedCost: cellFloat(r["BilledCost"]), AppliedQuantity: cellFloat(r["CommitmentDiscountQuantity"]),
			AppliedUnit: cellText(r["CommitmentDiscountUnit"])}}})
	}
	return out, nil
}

// objectCell is a JSON object cell, null when the object is empty.
func objectCell(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	return compactJSON(m)
}

// cellFloat is a numeric cell's value; 0 for null or text that is not a number.
func cellFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	f, err := strconv.ParseFloat(cellText(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
