package collect

import (
	"context"
	"time"

	"github.com/bursar-dev/bursar/internal/pricesource"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// Build constructs the source, reading its credential from the environment or a file. Every
// catalog it returns has passed the source's price bounds, so no source, file or API, can
// publish a price of 1e-300 or 1e300 per GPU-hour, and `collector prices` shows what
// `collector run` would accept.
func (sc SourceConfig) Build(ctx context.Context) (Source, error) {
	src, err := sc.build(ctx)
	if err != nil {
		return nil, err
	}
	return boundedSource{Source: src, bounds: sc.PriceBounds.Or(pricing.DefaultBounds)}, nil
}

// boundedSource refuses a catalog holding a price outside its bounds: such a price is a unit
// or parsing error far more often than a market, and one wrong price steers every plan.
type boundedSource struct {
	Source
	bounds pricing.Bounds
}

func (b boundedSource) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	cat, err := b.Source.Fetch(ctx, at)
	if err != nil {
		return pricing.Catalog{}, err
	}
	if err := b.bounds.Check(cat); err != nil {
		return pricing.Catalog{}, &pricesource.Error{Source: b.Name(), Kind: pricesource.KindInvalid, Err: err}
	}
	return cat, nil
}
