package pricesource

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// SkipHostWithoutGPU counts GCP host VM rows whose accelerator price is not in the files.
const SkipHostWithoutGPU = "gcp_host_without_gpu_price"

// skyNormalizer turns catalog rows into offers as they are read, one per market with a price.
// GCP rows are joined at the end, once every file is read: a host row (a2-highgpu-1g, no
// accelerator) plus the accelerator row of the same zone, GPU and count is the whole VM's
// price. Accelerator rows that no host row claims stay per-bundle offers marked GPUOnly; host
// rows with no accelerator row are skipped and counted. Only the GCP rows wait for the join;
// every other row is an offer at once, and offers share their repeated names (interned).
type skyNormalizer struct {
	source string
	at     time.Time
	cat    pricing.Catalog
	rows   int

	gcpAccel, gcpHosts []skyRow
	names              map[string]string
}

func newSkyNormalizer(source string, at time.Time) *skyNormalizer {
	return &skyNormalizer{source: source, at: at, names: map[string]string{}}
}

// add takes one row: an offer now, or a GCP row kept for the join.
func (n *skyNormalizer) add(r skyRow) error {
	n.rows++
	switch {
	case r.provider == "gcp" && r.instanceType == "":
		n.gcpAccel = append(n.gcpAccel, r.clone())
	case r.provider == "gcp" && r.accelerator == "":
		if _, _, ok := pricing.GCPMachine(r.instanceType); !ok {
			n.cat.Skip(pricing.SkipNotGPU)
			return nil
		}
		n.gcpHosts = append(n.gcpHosts, r.clone())
	default:
		return n.offers(r, r.instanceType, r.accelerator, r.price, r.spotPrice, false)
	}
	return nil
}

// finish joins the GCP rows and returns the catalog.
func (n *skyNormalizer) finish() (pricing.Catalog, error) {
	// gcp zone (and region) + accelerator type + count → accelerator row. The region entry is
	// the first zone's: zones of one region share prices, and the catalog keeps some only once.
	accel := map[string]skyRow{}
	for _, r := range n.gcpAccel {
		if a, ok := pricing.SkyPilotGCPAccelerator(r.accelerator); ok {
			accel[r.zone+"|"+a+"|"+normCount(r.count)] = r
			if _, seen := accel[r.region+"|"+a+"|"+normCount(r.count)]; !seen {
				accel[r.region+"|"+a+"|"+normCount(r.count)] = r
			}
		}
	}
	claimed := map[string]bool{}
	for _, r := range n.gcpHosts {
		if err := n.gcpHostRow(r, accel, claimed); err != nil {
			return pricing.Catalog{}, err
		}
	}
	for _, r := range n.gcpAccel {
		a, _ := pricing.SkyPilotGCPAccelerator(r.accelerator)
		if claimed[r.zone+"|"+a+"|"+normCount(r.count)] {
			continue
		}
		it := a + ":" + normCount(r.count)
		if err := n.offers(r, it, r.accelerator, r.price, r.spotPrice, true); err != nil {
			return pricing.Catalog{}, err
		}
	}
	return n.cat, nil
}

func (n *skyNormalizer) gcpHostRow(r skyRow, accel map[string]skyRow, claimed map[string]bool) error {
	a, count, _ := pricing.GCPMachine(r.instanceType)
	gpuRow, ok := accel[r.zone+"|"+a+"|"+strconv.Itoa(count)]
	if !ok {
		gpuRow, ok = accel[r.region+"|"+a+"|"+strconv.Itoa(count)]
	}
	if !ok {
		n.cat.Skip(SkipHostWithoutGPU)
		return nil
	}
	claimed[gpuRow.zone+"|"+a+"|"+strconv.Itoa(count)] = true
	price, err := sumPrices(r.where(), r.price, gpuRow.price)
	if err != nil {
		return err
	}
	spot, err := sumPrices(r.where(), r.spotPrice, gpuRow.spotPrice)
	if err != nil {
		return err
	}
	vm := r
	vm.accelerator, vm.count = gpuRow.accelerator, gpuRow.count
	return n.offers(vm, r.instanceType, gpuRow.accelerator, price, spot, false)
}

// sumPrices adds a host and an accelerator price; a market missing from either is missing.
func sumPrices(where, host, gpu string) (string, error) {
	if host == "" || gpu == "" {
		return "", nil
	}
	h, err := pricing.ParsePrice(host)
	if err != nil {
		return "", fmt.Errorf("%s: host %w", where, err)
	}
	g, err := pricing.ParsePrice(gpu)
	if err != nil {
		return "", fmt.Errorf("%s: accelerator row's %w", where, err)
	}
	// Catalog prices have at most a few decimals; rounding to 1e-9 drops float noise
	// (0.36485 + 1.2406 is 1.6054499999999998) so the sum prints and compares as written.
	return strconv.FormatFloat(math.Round((h+g)*1e9)/1e9, 'f', -1, 64), nil
}

// offers adds the on-demand and spot offers of one row. An empty price means that market is
// not offered there.
func (n *skyNormalizer) offers(r skyRow, instanceType, accelerator, price, spot string, gpuOnly bool) error {
	cat := &n.cat
	if accelerator == "" || pricing.SkyPilotNotGPU(accelerator) {
		cat.Skip(pricing.SkipNotGPU)
		return nil
	}
	gpu, ok := pricing.SkyPilotGPU(accelerator)
	if !ok {
		cat.UnknownGPU("skypilot-"+r.provider, accelerator)
		return nil
	}
	count, ok := pricing.ParseCount(r.count)
	if !ok {
		cat.Skip(pricing.SkipFractional)
		return nil
	}
	if r.region == "" || instanceType == "" {
		return fmt.Errorf("%s: row has no region or instance type", r.where())
	}
	where := r.where()
	for _, m := range []struct {
		market pricing.Market
		price  string
	}{{pricing.OnDemand, price}, {pricing.Spot, spot}} {
		if m.price == "" {
			continue
		}
		p, err := pricing.ParsePrice(m.price)
		if err != nil {
			return fmt.Errorf("%s: %s %w", where, m.market, err)
		}
		o := pricing.Offer{Provider: n.name(r.provider), Region: n.name(r.region), Zone: n.name(r.zone),
			InstanceType: n.name(instanceType), GPU: gpu.Name, GPUCount: count, GPUMemoryGB: gpu.MemoryGB,
			Market: m.market, PricePerHour: p, Source: n.source, ObservedAt: n.at, GPUOnly: gpuOnly}
		if err := cat.AddFrom(o, "USD", where); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

// name is s, shared with every other offer that names the same thing: a catalog repeats a few
// hundred regions, zones and instance types over its rows, and an offer holding a slice of
// its CSV line would keep the whole line alive.
func (n *skyNormalizer) name(s string) string {
	if v, ok := n.names[s]; ok {
		return v
	}
	v := strings.Clone(s)
	n.names[v] = v
	return v
}

// normCount writes "8.0" and "8" alike.
func normCount(s string) string {
	if n, ok := pricing.ParseCount(s); ok {
		return strconv.Itoa(n)
	}
	return s
}
