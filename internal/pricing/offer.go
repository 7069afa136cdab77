// Package pricing is the pure core of price collection: the normalized Offer every source
// produces, the canonical GPU names, and each provider's mapping from its own names to them.
// Nothing here does I/O or reads a clock; observation times are passed in by the caller.
package pricing

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Market is how an offer is sold.
type Market string

// The markets an offer can be in.
const (
	Spot     Market = "spot"
	OnDemand Market = "on_demand"
	Reserved Market = "reserved"
)

// Valid reports whether m is one of the known markets.
func (m Market) Valid() bool { return m == Spot || m == OnDemand || m == Reserved }

// Offer is one thing that can be bought at one price: an instance type (or an accelerator bundle)
// in a location and a market. Prices are USD; a source that sees another currency fails rather
// than guessing an exchange rate.
type Offer struct {
	Provider     string    `json:"provider"`
	Region       string    `json:"region"`
	Zone         string    `json:"zone,omitempty"`
	InstanceType string    `json:"instance_type"`
	GPU          string    `json:"gpu"`           // canonical name, see Canonical
	GPUCount     int       `json:"gpu_count"`     // GPUs in one instance
	GPUMemoryGB  int       `json:"gpu_memory_gb"` // per GPU
	Market       Market    `json:"market"`
	PricePerHour float64   `json:"price_per_hour"` // USD per instance-hour
	Source       string    `json:"source"`
	ObservedAt   time.Time `json:"observed_at"`
	// GPUOnly marks a price that covers the accelerators alone, not the host VM: GCP bills GPUs
	// as separate SKUs, so such an offer is a lower bound until a host price is added.
	GPUOnly bool `json:"gpu_only,omitempty"`
}

// PricePerGPUHour is the instance price spread over its GPUs.
func (o Offer) PricePerGPUHour() float64 {
	if o.GPUCount <= 0 {
		return 0
	}
	return o.PricePerHour / float64(o.GPUCount)
}

// Key identifies the thing on offer independently of its price, so that two observations of the
// same offer can be compared to detect a price change.
func (o Offer) Key() string {
	return strings.Join([]string{o.Provider, o.Region, o.Zone, o.InstanceType, string(o.Market),
		o.GPU, strconv.Itoa(o.GPUCount)}, "|")
}

// Errors a catalog returns for rows that make a whole fetch untrustworthy.
var (
	// ErrCurrency: a price is not in USD. Bursar does not convert currencies.
	ErrCurrency = errors.New("price is not in USD")
	// ErrBadPrice: a price is negative, NaN or infinite.
	ErrBadPrice = errors.New("price is negative or not a number")
	// ErrBadOffer: an offer lacks a field every offer needs.
	ErrBadOffer = errors.New("offer is incomplete")
)

// Reasons a row is skipped rather than turned into an offer. They are counted, never silent.
const (
	SkipZeroPrice  = "zero_price"
	SkipDuplicate  = "duplicate"
	SkipNotGPU     = "not_gpu"
	SkipFractional = "fractional_gpu"
	SkipExcluded   = "excluded"
)

// Catalog is one source's normalized result from one fetch: its offers, the rows it skipped by
// reason, the GPU names it could not map (by "provider:name"), which are reported, not guessed,
// and warnings about rows it had to choose between (see Add), for the collector to log.
type Catalog struct {
	Offers   []Offer
	Skipped  map[string]int
	Unknown  map[string]int
	Warnings []string

	index  map[string]int
	origin map[string]string // offer key → where it was read (file:line, SKU), for errors
}

// maxWarnings bounds the warnings one catalog keeps; the rest are still counted in Skipped.
const maxWarnings = 20

// Skip counts a row left out for reason.
func (c *Catalog) Skip(reason string) {
	if c.Skipped == nil {
		c.Skipped = map[string]int{}
	}
	c.Skipped[reason]++
}

// UnknownGPU counts a row whose GPU name has no canonical mapping.
func (c *Catalog) UnknownGPU(provider, name string) {
	if c.Unknown == nil {
		c.Unknown = map[string]int{}
	}
	c.Unknown[provider+":"+name]++
}

// Add validates o, priced in currency, and adds it; AddFrom does the same and remembers where
// the offer was read.
func (c *Catalog) Add(o Offer, currency string) error { return c.AddFrom(o, currency, "") }

// AddFrom validates o, priced in currency and read at where (file:line, a SKU or offer id; may be
// empty), and adds it. A zero price is skipped (providers list free placeholder SKUs such as AWS
// capacity blocks). Of two offers with one key the lower price is kept, whatever their order,
// and a warning names both; equal prices are one offer seen twice. A negative or non-finite
// price, a currency other than USD or a missing field is an error: the caller must then drop
// the whole fetch rather than publish a partial or wrong catalog.
func (c *Catalog) AddFrom(o Offer, currency, where string) error {
	if !strings.EqualFold(currency, "USD") {
		return fmt.Errorf("%s %s: %w (got %q)", o.Provider, o.InstanceType, ErrCurrency, currency)
	}
	p := o.PricePerHour
	if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
		return fmt.Errorf("%s %s: %w (got %v)", o.Provider, o.InstanceType, ErrBadPrice, p)
	}
	if o.Provider == "" || o.Region == "" || o.InstanceType == "" || o.GPU == "" ||
		o.GPUCount <= 0 || !o.Market.Valid() {
		return fmt.Errorf("%s %s: %w: %+v", o.Provider, o.InstanceType, ErrBadOffer, o)
	}
	if p == 0 {
		c.Skip(SkipZeroPrice)
		return nil
	}
	c.buildIndex()
	k := o.Key()
	if i, dup := c.index[k]; dup {
		c.Skip(SkipDuplicate)
		c.keepLower(i, o, where)
		return nil
	}
	c.index[k] = len(c.Offers)
	c.Offers = append(c.Offers, o)
	c.setOrigin(k, where)
	return nil
}

func (c *Catalog) buildIndex() {
	if c.index != nil {
		return
	}
	c.index = make(map[string]int, len(c.Offers))
	for i, prev := range c.Offers {
		c.index[prev.Key()] = i
	}
}

// keepLower settles a duplicate key: the lower price wins, and a differing price is a warning
// naming both rows, so an operator can tell which row of the file is the one in use.
func (c *Catalog) keepLower(i int, o Offer, where string) {
	old := c.Offers[i]
	if old.PricePerHour == o.PricePerHour {
		return
	}
	k := o.Key()
	oldWhere := c.Origin(k)
	kept := oldWhere
	if o.PricePerHour < old.PricePerHour {
		c.Offers[i] = o
		c.setOrigin(k, where)
		kept = where
	}
	c.warn(fmt.Sprintf("duplicate offer %s: %s at %v USD/h and %s at %v USD/h; kept the lower price (%s)",
		k, orUnnamed(oldWhere), old.PricePerHour, orUnnamed(where), o.PricePerHour, orUnnamed(kept)))
}

func (c *Catalog) warn(msg string) {
	if len(c.Warnings) < maxWarnings {
		c.Warnings = append(c.Warnings, msg)
	}
}

func (c *Catalog) setOrigin(key, where string) {
	if where == "" {
		if c.origin != nil {
			delete(c.origin, key)
		}
		return
	}
	if c.origin == nil {
		c.origin = map[string]string{}
	}
	c.origin[key] = where
}

// Origin is where the offer of that key was read (file:line, a SKU), or "" when the source did
// not say.
func (c Catalog) Origin(key string) string { return c.origin[key] }

func orUnnamed(where string) string {
	if where == "" {
		return "a row"
	}
	return where
}

// Sort orders the offers by key, so that output and comparisons are deterministic. Each key
// is built once, not once per comparison: a large catalog sorted by Key() in the comparator
// spent more time and memory building keys than reading its file.
func (c *Catalog) Sort() {
	keys := make([]string, len(c.Offers))
	for i, o := range c.Offers {
		keys[i] = o.Key()
	}
	sort.Sort(byKey{keys: keys, offers: c.Offers})
	c.index = nil
}

// byKey sorts offers by their precomputed keys, swapping both together.
type byKey struct {
	keys   []string
	offers []Offer
}

func (b byKey) Len() int           { return len(b.keys) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.offers[i], b.offers[j] = b.offers[j], b.offers[i]
}

// Merge adds every offer and count of other into c.
func (c *Catalog) Merge(other Catalog) {
	for _, o := range other.Offers {
		if err := c.AddFrom(o, "USD", other.Origin(o.Key())); err != nil {
			c.Skip(SkipExcluded)
		}
	}
	for _, w := range other.Warnings {
		c.warn(w)
	}
	for k, n := range other.Skipped {
		c.Skipped = addCount(c.Skipped, k, n)
	}
	for k, n := range other.Unknown {
		c.Unknown = addCount(c.Unknown, k, n)
	}
}

func addCount(m map[string]int, k string, n int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k] += n
	return m
}

// UnknownCount is the number of rows whose GPU could not be mapped.
func (c Catalog) UnknownCount() int {
	n := 0
	for _, v := range c.Unknown {
		n += v
	}
	return n
}
