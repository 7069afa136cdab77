package pricing

import (
	"errors"
	"fmt"
	"math"
)

// Bounds are the plausible prices of one GPU-hour, in USD. A price outside them is far more
// likely a unit or parsing error (cents read as dollars, a monthly price, 1e-300) than an offer,
// and a wrong price steers every plan, so a catalog holding one is refused rather than
// published. An operator who really sees such prices widens the bounds in the collector config.
type Bounds struct {
	MinPerGPUHour float64 `yaml:"min_per_gpu_hour" json:"min_per_gpu_hour"`
	MaxPerGPUHour float64 `yaml:"max_per_gpu_hour" json:"max_per_gpu_hour"`
}

// DefaultBounds hold every real price Bursar has seen with a wide margin: the recorded
// catalogs run from 0.15 USD (a T4 or L4 on spot) to 16 USD (an H100 on demand) per
// GPU-hour. Below a cent or above 100 USD per GPU-hour is a mistake, not a market.
var DefaultBounds = Bounds{MinPerGPUHour: 0.01, MaxPerGPUHour: 100}

// ErrImplausiblePrice marks an offer priced outside the bounds.
var ErrImplausiblePrice = errors.New("implausible price")

// Or fills the bounds left unset (zero) from def, so a source can widen one side only.
func (b Bounds) Or(def Bounds) Bounds {
	if b.MinPerGPUHour == 0 {
		b.MinPerGPUHour = def.MinPerGPUHour
	}
	if b.MaxPerGPUHour == 0 {
		b.MaxPerGPUHour = def.MaxPerGPUHour
	}
	return b
}

// Validate reports bounds that cannot be meant: negative, not finite, or a minimum that is not
// below the maximum. It names the field at fault.
func (b Bounds) Validate() (field string, err error) {
	switch {
	case math.IsNaN(b.MinPerGPUHour) || math.IsInf(b.MinPerGPUHour, 0) || b.MinPerGPUHour < 0:
		return "min_per_gpu_hour", fmt.Errorf("%v is not a non-negative price", b.MinPerGPUHour)
	case math.IsNaN(b.MaxPerGPUHour) || math.IsInf(b.MaxPerGPUHour, 0) || b.MaxPerGPUHour <= 0:
		return "max_per_gpu_hour", fmt.Errorf("%v is not a positive price", b.MaxPerGPUHour)
	case b.MinPerGPUHour >= b.MaxPerGPUHour:
		return "max_per_gpu_hour", fmt.Errorf("%v is not above min_per_gpu_hour %v", b.MaxPerGPUHour, b.MinPerGPUHour)
	}
	return "", nil
}

// Check returns an error for the first offer of c priced outside b, naming where it was read
// (or its key), the price, the bound it crossed and the setting that widens it.
func (b Bounds) Check(c Catalog) error {
	var first error
	more := 0
	for _, o := range c.Offers {
		err := b.check(o)
		switch {
		case err == nil:
		case first == nil:
			where := c.Origin(o.Key())
			if where == "" {
				where = "offer"
			}
			first = fmt.Errorf("%s: %s: %w", where, o.Key(), err)
		default:
			more++
		}
	}
	if more > 0 {
		return fmt.Errorf("%w (and %d more offers out of bounds)", first, more)
	}
	return first
}

func (b Bounds) check(o Offer) error {
	p := o.PricePerGPUHour()
	bound, side, setting := b.MinPerGPUHour, "below the minimum", "min_per_gpu_hour"
	switch {
	case !(p >= b.MinPerGPUHour): // NaN too
	case p > b.MaxPerGPUHour:
		bound, side, setting = b.MaxPerGPUHour, "above the maximum", "max_per_gpu_hour"
	default:
		return nil
	}
	return fmt.Errorf("%w: %v USD/h for %d GPUs is %v USD per GPU-hour, %s %v; "+
		"if the price is real, set price_bounds.%s in the collector config (defaults or this source)",
		ErrImplausiblePrice, o.PricePerHour, o.GPUCount, p, side, bound, setting)
}
