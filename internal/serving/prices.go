package serving

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// SpotQuote is one region's spot price for one machine type, from SkyNomad's GCP price cache
// (spot_price_cache_gcp/<region>_<machine>.json: the Billing Catalog's CPU, RAM and GPU SKUs).
type SpotQuote struct {
	Region     string
	Machine    string
	USDPerHour float64
}

// ParseSpotQuote reads one price-cache file. Only region, machine_type and price are used.
func ParseSpotQuote(name string, data []byte) (SpotQuote, error) {
	var f struct {
		Region  *string  `json:"region"`
		Machine *string  `json:"machine_type"`
		Price   *float64 `json:"price"`
		Unit    string   `json:"price_unit"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return SpotQuote{}, fmt.Errorf("%s: %w: %v (want {\"region\":..,\"machine_type\":..,\"price\":N})", name, ErrMalformedInput, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return SpotQuote{}, fmt.Errorf("%s: %w: extra data after the JSON object", name, ErrMalformedInput)
	}
	switch {
	case f.Region == nil || *f.Region == "", f.Machine == nil || *f.Machine == "":
		return SpotQuote{}, fmt.Errorf("%s: %w: region or machine_type is missing", name, ErrMalformedInput)
	case f.Price == nil || !(*f.Price > 0) || math.IsInf(*f.Price, 0):
		return SpotQuote{}, fmt.Errorf("%s: %w: price is missing or not a positive number", name, ErrMalformedInput)
	case f.Unit != "" && f.Unit != "h":
		return SpotQuote{}, fmt.Errorf("%s: %w: price_unit %q, want \"h\" (USD per hour)", name, ErrMalformedInput, f.Unit)
	}
	return SpotQuote{Region: *f.Region, Machine: *f.Machine, USDPerHour: *f.Price}, nil
}

// CatalogRow is one row of a SkyPilot catalog subset (gcp_vms_*_subset.csv): a host machine
// (InstanceType set) or an accelerator bundle (AcceleratorName set), priced per hour.
type CatalogRow struct {
	Instance, Accelerator string
	Count                 int
	Region, Zone          string
	Price                 float64
}

// ParseCatalog reads a SkyPilot GCP catalog subset (columns InstanceType, AcceleratorName,
// AcceleratorCount, Region, AvailabilityZone, Price). Rows without an on-demand price are kept
// out: they offer nothing to buy.
func ParseCatalog(name string, r io.Reader) ([]CatalogRow, error) {
	tb, err := readTable(name, r, "InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone", "Price")
	if err != nil {
		return nil, err
	}
	var out []CatalogRow
	for i := range tb.rows {
		row := CatalogRow{Instance: tb.str(i, "InstanceType"), Accelerator: tb.str(i, "AcceleratorName"),
			Region: tb.str(i, "Region"), Zone: tb.str(i, "AvailabilityZone")}
		if row.Instance == "" && row.Accelerator == "" {
			return nil, tb.errf(i, "neither InstanceType nor AcceleratorName is set")
		}
		if row.Region == "" || row.Zone == "" {
			return nil, tb.errf(i, "Region or AvailabilityZone is empty")
		}
		if tb.str(i, "AcceleratorCount") != "" {
			n, err := tb.num(i, "AcceleratorCount")
			if err != nil || n != math.Trunc(n) || n > 1024 {
				return nil, tb.errf(i, "AcceleratorCount = %q is not a whole count", tb.str(i, "AcceleratorCount"))
			}
			row.Count = int(n)
		}
		if tb.str(i, "Price") == "" {
			continue
		}
		if row.Price, err = tb.num(i, "Price"); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// NodeShape is how a GCP catalog prices one replica (one 8-GPU node) of a GPU type: the
// accelerator bundle's row plus the host machine's, hostCount times. SkyPilot's GCP catalog
// splits a VM's price that way (../shared/data/prices/skypilot-catalog/README.md).
type NodeShape struct {
	Accelerator string
	Count       int
	Host        string
	HostCount   int
	// Machine is the whole node's machine type, as spot price caches name it.
	Machine string
}

// gcpShapes are the nodes of the default profile's types. The catalog subset has no
// a3-highgpu-8g host row; a3-highgpu-8g has exactly 8x the vCPUs and memory of a3-highgpu-1g
// (208 vs 26 vCPUs, 1,872 vs 234 GB), so its host is priced as eight a3-highgpu-1g hosts.
var gcpShapes = map[string]NodeShape{
	"H100-80GB": {Accelerator: "H100", Count: 8, Host: "a3-highgpu-1g", HostCount: 8, Machine: "a3-highgpu-8g"},
	"A100-80GB": {Accelerator: "A100-80GB", Count: 8, Host: "a2-ultragpu-8g", HostCount: 1, Machine: "a2-ultragpu-8g"},
}

// onDemandPrice is a node's on-demand price in zone's region: the accelerator row of that zone
// (else the region's cheapest) plus the host row of that zone (else the region's cheapest).
// SkyPilot's subset keeps one zone for some regions whose zones cost the same.
func onDemandPrice(rows []CatalogRow, s NodeShape, zone string) (float64, bool) {
	acc, ok := lookup(rows, zone, func(r CatalogRow) bool { return r.Accelerator == s.Accelerator && r.Count == s.Count })
	if !ok {
		return 0, false
	}
	host, ok := lookup(rows, zone, func(r CatalogRow) bool { return r.Instance == s.Host })
	if !ok {
		return 0, false
	}
	return acc + float64(s.HostCount)*host, true
}

// lookup is the price of the row that matches in zone, else the cheapest matching row in zone's
// region.
func lookup(rows []CatalogRow, zone string, match func(CatalogRow) bool) (float64, bool) {
	best, found := math.Inf(1), false
	for _, r := range rows {
		if !match(r) {
			continue
		}
		if r.Zone == zone {
			return r.Price, true
		}
		if r.Region == regionOf(zone) && r.Price < best {
			best, found = r.Price, true
		}
	}
	return best, found
}

// regionOf is a GCP zone's region: us-central1-a -> us-central1.
func regionOf(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}
