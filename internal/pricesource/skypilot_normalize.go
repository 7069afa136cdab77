package pricesource

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// SkipHostWithoutGPU counts GCP host VM rows whose accelerator price is not in the files.
const SkipHostWithoutGPU = "gcp_host_without_gpu_price"

// normalizeSkyPilot turns catalog rows into offers, one per market with a price. GCP rows are
// joined first: a host row (a2-highgpu-1g, no accelerator) plus the accelerator row of the same
// zone, GPU and count is the whole VM's price. Accelerator rows that no host row claims stay
// per-bundle offers marked GPUOnly; host rows with no accelerator row are skipped and counted.
func normalizeSkyPilot(rows []skyRow, source string, at time.Time, cat *pricing.Catalog) error {
	// gcp zone (and region) + accelerator type + count → accelerator row. The region entry is
	// the first zone's: zones of one region share prices, and the catalog keeps some only once.
	accel := map[string]skyRow{}
	claimed := map[string]bool{}
	for _, r := range rows {
		if r.provider == "gcp" && r.instanceType == "" {
			if a, ok := pricing.SkyPilotGCPAccelerator(r.accelerator); ok {
				accel[r.zone+"|"+a+"|"+normCount(r.count)] = r
				if _, seen := accel[r.region+"|"+a+"|"+normCount(r.count)]; !seen {
					accel[r.region+"|"+a+"|"+normCount(r.count)] = r
				}
			}
		}
	}
	for _, r := range rows {
		var err error
		switch {
		case r.provider == "gcp" && r.instanceType == "":
			continue // accelerator rows: after the joins
		case r.provider == "gcp" && r.accelerator == "":
			err = gcpHostRow(r, accel, claimed, source, at, cat)
		default:
			err = skyRowOffers(r, r.instanceType, r.accelerator, r.price, r.spotPrice, false, source, at, cat)
		}
		if err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.provider != "gcp" || r.instanceType != "" {
			continue
		}
		a, _ := pricing.SkyPilotGCPAccelerator(r.accelerator)
		if claimed[r.zone+"|"+a+"|"+normCount(r.count)] {
			continue
		}
		it := a + ":" + normCount(r.count)
		if err := skyRowOffers(r, it, r.accelerator, r.price, r.spotPrice, true, source, at, cat); err != nil {
			return err
		}
	}
	return nil
}

func gcpHostRow(r skyRow, accel map[string]skyRow, claimed map[string]bool, source string, at time.Time, cat *pricing.Catalog) error {
	a, n, ok := pricing.GCPMachine(r.instanceType)
	if !ok {
		cat.Skip(pricing.SkipNotGPU)
		return nil
	}
	gpuRow, ok := accel[r.zone+"|"+a+"|"+strconv.Itoa(n)]
	if !ok {
		gpuRow, ok = accel[r.region+"|"+a+"|"+strconv.Itoa(n)]
	}
	if !ok {
		cat.Skip(SkipHostWithoutGPU)
		return nil
	}
	claimed[gpuRow.zone+"|"+a+"|"+strconv.Itoa(n)] = true
	price, err := sumPrices(r.where, r.price, gpuRow.price)
	if err != nil {
		return err
	}
	spot, err := sumPrices(r.where, r.spotPrice, gpuRow.spotPrice)
	if err != nil {
		return err
	}
	vm := r
	vm.accelerator, vm.count = gpuRow.accelerator, gpuRow.count
	return skyRowOffers(vm, r.instanceType, gpuRow.accelerator, price, spot, false, source, at, cat)
}

// sumPrices adds a host and an accelerator price; a market missing from either is missing.
func sumPrices(where, host, gpu string) (string, error) {
	if host == "" || gpu == "" {
		return "", nil
	}
	h, err1 := strconv.ParseFloat(host, 64)
	g, err2 := strconv.ParseFloat(gpu, 64)
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("%s: price %q or %q is not a number", where, host, gpu)
	}
	// Catalog prices have at most a few decimals; rounding to 1e-9 drops float noise
	// (0.36485 + 1.2406 is 1.6054499999999998) so the sum prints and compares as written.
	return strconv.FormatFloat(math.Round((h+g)*1e9)/1e9, 'f', -1, 64), nil
}

// skyRowOffers adds the on-demand and spot offers of one row. An empty price means that
// market is not offered there.
func skyRowOffers(r skyRow, instanceType, accelerator, price, spot string, gpuOnly bool,
	source string, at time.Time, cat *pricing.Catalog) error {
	if accelerator == "" || pricing.SkyPilotNotGPU(accelerator) {
		cat.Skip(pricing.SkipNotGPU)
		return nil
	}
	gpu, ok := pricing.SkyPilotGPU(accelerator)
	if !ok {
		cat.UnknownGPU("skypilot-"+r.provider, accelerator)
		return nil
	}
	n, ok := pricing.ParseCount(r.count)
	if !ok {
		cat.Skip(pricing.SkipFractional)
		return nil
	}
	if r.region == "" || instanceType == "" {
		return fmt.Errorf("%s: row has no region or instance type", r.where)
	}
	for _, m := range []struct {
		market pricing.Market
		price  string
	}{{pricing.OnDemand, price}, {pricing.Spot, spot}} {
		if m.price == "" {
			continue
		}
		p, err := strconv.ParseFloat(m.price, 64)
		if err != nil {
			return fmt.Errorf("%s: %s price %q is not a number", r.where, m.market, m.price)
		}
		o := pricing.Offer{Provider: r.provider, Region: r.region, Zone: r.zone, InstanceType: instanceType,
			GPU: gpu.Name, GPUCount: n, GPUMemoryGB: gpu.MemoryGB, Market: m.market, PricePerHour: p,
			Source: source, ObservedAt: at, GPUOnly: gpuOnly}
		if err := cat.Add(o, "USD"); err != nil {
			return fmt.Errorf("%s: %w", r.where, err)
		}
	}
	return nil
}

// normCount writes "8.0" and "8" alike.
func normCount(s string) string {
	if n, ok := pricing.ParseCount(s); ok {
		return strconv.Itoa(n)
	}
	return s
}
