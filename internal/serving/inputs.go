package serving

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Paths are the replay's input files; empty fields take the benchmark's defaults under Data.
type Paths struct {
	// Data is ../shared/data as seen from the repository root.
	Data     string
	Demand   string // per-minute demand CSV
	Profile  string // throughput table
	Capacity string // folder with h100_probes.csv and spot_price_cache_gcp/
	Query    ProfileQuery
	// Scale multiplies demand; 0: the scale at which the trace's peak needs PeakReplicas
	// replicas of the profile's fastest type.
	Scale float64
}

// PeakReplicas is SERVING.md's default sizing: the trace's peak needs 16 replicas of the
// fastest type.
const PeakReplicas = 16

// DefaultData is where the shared data lies relative to the repository root.
const DefaultData = "../shared/data"

// DefaultDemands are the benchmark's two ServeGen traces, each its own run.
func DefaultDemands(data string) []string {
	dir := filepath.Join(data, "serving/demand/servegen")
	return []string{filepath.Join(dir, "m-large_per_minute.csv"), filepath.Join(dir, "m-mid_per_minute.csv")}
}

func (p Paths) withDefaults() Paths {
	if p.Data == "" {
		p.Data = DefaultData
	}
	if p.Demand == "" {
		p.Demand = DefaultDemands(p.Data)[0]
	}
	if p.Profile == "" {
		p.Profile = filepath.Join(p.Data, "serving/profiles/splitwise/splitwise_decode_tput_at_tpot_slo.csv")
	}
	if p.Capacity == "" {
		p.Capacity = filepath.Join(p.Data, "serving/availability/skynomad-gcp-h100")
	}
	if p.Query == (ProfileQuery{}) {
		p.Query = DefaultProfileQuery()
	}
	return p
}

// Inputs are one run's inputs read and joined: demand, profile, spot capacity and the sources
// every policy chooses from.
type Inputs struct {
	Paths    Paths
	Demand   *Demand
	Profile  *Profile
	Capacity *Capacity
	Scale    float64
	Sources  []Source
	// zoneOf[i] is source i's zone in Capacity (spot), or -1 (on-demand).
	zoneOf []int
	// Notes say where each price came from, for the run's header and docs/serving.md.
	Notes []string
}

// Load reads and joins the inputs of p (defaults filled in).
func Load(p Paths) (*Inputs, error) {
	p = p.withDefaults()
	in := &Inputs{Paths: p}
	var err error
	if in.Demand, err = readFile(p.Demand, ParseDemand); err != nil {
		return nil, err
	}
	if in.Profile, err = readFile(p.Profile, func(n string, f io.Reader) (*Profile, error) { return ParseProfile(n, f, p.Query) }); err != nil {
		return nil, err
	}
	probes := filepath.Join(p.Capacity, "h100_probes.csv")
	if in.Capacity, err = readFile(probes, func(n string, f io.Reader) (*Capacity, error) { return ParseProbes(n, f, "H100-80GB") }); err != nil {
		return nil, err
	}
	if in.Scale = p.Scale; in.Scale == 0 {
		peak := in.Demand.Peak()
		if peak == 0 {
			return nil, fmt.Errorf("%s: demand is zero throughout: nothing to scale", p.Demand)
		}
		in.Scale = PeakReplicas * in.Profile.Fastest() / peak
	}
	if in.Scale < 0 || math.IsInf(in.Scale, 0) || math.IsNaN(in.Scale) {
		return nil, fmt.Errorf("demand scale %v: want a number > 0", in.Scale)
	}
	if err := in.addSpot(); err != nil {
		return nil, err
	}
	if err := in.addOnDemand(); err != nil {
		return nil, err
	}
	return in, nil
}

// readFile opens path and parses it with parse, naming the file in errors.
func readFile[T any](path string, parse func(string, io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	return parse(path, f)
}

// addSpot makes one spot source per probed zone, priced at its region's spot quote. A zone whose
// region has no quote has no price and is left out (and noted).
func (in *Inputs) addSpot() error {
	typ := in.Capacity.Type
	shape, ok := gcpShapes[typ]
	tp, inProfile := in.Profile.Types[typ]
	if !ok || !inProfile {
		in.Notes = append(in.Notes, fmt.Sprintf("spot: %s is not in the profile: no spot sources", typ))
		return nil
	}
	quotes, err := loadSpotQuotes(filepath.Join(in.Paths.Capacity, "spot_price_cache_gcp"), shape.Machine)
	if err != nil {
		return err
	}
	for z, zone := range in.Capacity.Zones {
		price, ok := quotes[regionOf(zone)]
		if !ok {
			in.Notes = append(in.Notes, fmt.Sprintf("spot %s %s: no %s spot price for region %s: left out", typ, zone, shape.Machine, regionOf(zone)))
			continue
		}
		in.Sources = append(in.Sources, Source{Type: typ, Zone: zone, Spot: true, USDPerHour: price, Rate: tp.Rate, GPUs: tp.GPUs})
		in.zoneOf = append(in.zoneOf, z)
	}
	in.Notes = append(in.Notes, fmt.Sprintf("spot %s: %d zones of %s, capacity floor(instances_created / %d), %s per region from spot_price_cache_gcp",
		typ, len(in.Sources), in.Capacity.Name, tp.GPUs, shape.Machine))
	return nil
}

// loadSpotQuotes reads every *.json in dir and keeps machine's price per region.
func loadSpotQuotes(dir, machine string) (map[string]float64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no spot price files (*.json) in %s: give a --capacity folder with spot_price_cache_gcp/", dir)
	}
	out := map[string]float64{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		q, err := ParseSpotQuote(f, data)
		if err != nil {
			return nil, err
		}
		if q.Machine == machine {
			out[q.Region] = q.USDPerHour
		}
	}
	return out, nil
}

// addOnDemand makes, per GPU type of the profile, one on-demand source per probed region the
// catalog prices that type in (at the region's cheapest catalog zone); a type priced in no probed
// region gets one source per catalog region instead. On-demand is never short (Unlimited).
func (in *Inputs) addOnDemand() error {
	dir := filepath.Join(in.Paths.Data, "prices/skypilot-catalog")
	var rows []CatalogRow
	for _, name := range []string{"gcp_vms_a2_a3_host_subset.csv", "gcp_vms_accelerator_subset.csv"} {
		r, err := readFile(filepath.Join(dir, name), func(n string, f io.Reader) ([]CatalogRow, error) { return ParseCatalog(n, f) })
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	var probed []string
	for _, z := range in.Capacity.Zones {
		probed = append(probed, regionOf(z))
	}
	for _, typ := range in.Profile.TypeNames() {
		shape, ok := gcpShapes[typ]
		if !ok {
			in.Notes = append(in.Notes, fmt.Sprintf("on-demand %s: no GCP node shape known: left out", typ))
			continue
		}
		zones := cheapestPerRegion(rows, shape, probed)
		where := "probed regions"
		if len(zones) == 0 {
			zones, where = cheapestPerRegion(rows, shape, nil), "catalog regions (none probed)"
		}
		tp := in.Profile.Types[typ]
		for _, z := range zones {
			price, _ := onDemandPrice(rows, shape, z)
			in.Sources = append(in.Sources, Source{Type: typ, Zone: z, USDPerHour: price, Rate: tp.Rate, GPUs: tp.GPUs})
			in.zoneOf = append(in.zoneOf, -1)
		}
		in.Notes = append(in.Notes, fmt.Sprintf("on-demand %s: %d %s, %s ×%d + %d × %s host, skypilot-catalog GCP subsets",
			typ, len(zones), where, shape.Accelerator, shape.Count, shape.HostCount, shape.Host))
	}
	return nil
}

// cheapestPerRegion is, per region (of regions, or every region when nil), the catalog zone
// where shape's node is cheapest on demand, in region order.
func cheapestPerRegion(rows []CatalogRow, s NodeShape, regions []string) []string {
	best := map[string]string{}
	price := map[string]float64{}
	for _, r := range rows {
		if r.Accelerator != s.Accelerator || r.Count != s.Count {
			continue
		}
		if regions != nil && !slices.Contains(regions, r.Region) {
			continue
		}
		p, ok := onDemandPrice(rows, s, r.Zone)
		if !ok {
			continue
		}
		if cur, seen := price[r.Region]; !seen || p < cur || (p == cur && r.Zone < best[r.Region]) {
			best[r.Region], price[r.Region] = r.Zone, p
		}
	}
	var out []string
	for _, region := range sortedKeys(best) {
		out = append(out, best[region])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Ticks is how many minutes both demand and capacity cover, aligned from their starts.
func (in *Inputs) Ticks() int { return min(len(in.Demand.TokensPerS), len(in.Capacity.GPUs)) }

// Window cuts the window of length ticks starting at offset.
func (in *Inputs) Window(offset, length, coldStart int) *Window {
	w := &Window{Sources: in.Sources, ColdStart: coldStart, Demand: make([]float64, length), Capacity: make([][]int, length)}
	for t := max(0, offset-PastTicks); t < offset; t++ {
		w.Past = append(w.Past, in.Demand.TokensPerS[t]*in.Scale)
	}
	for t := range length {
		w.Demand[t] = in.Demand.TokensPerS[offset+t] * in.Scale
		w.Capacity[t] = make([]int, len(in.Sources))
		for i, src := range in.Sources {
			if z := in.zoneOf[i]; z >= 0 {
				w.Capacity[t][i] = in.Capacity.Replicas(offset+t, z, src.GPUs)
			} else {
				w.Capacity[t][i] = Unlimited
			}
		}
	}
	return w
}

// DescribeSources lists the sources, one a line, for the run's header.
func DescribeSources(sources []Source) string {
	var b strings.Builder
	for _, s := range sources {
		market := "on-demand"
		if s.Spot {
			market = "spot"
		}
		fmt.Fprintf(&b, "  %-10s %-10s %-18s $%6.2f/h  %6.1f tok/s  $%.2f per M tokens at full use\n",
			market, s.Type, s.Zone, s.USDPerHour, s.Rate, s.USDPerHour/(s.Rate*3600)*1e6)
	}
	return b.String()
}
