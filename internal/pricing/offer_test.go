package pricing

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func offer(price float64) Offer {
	return Offer{Provider: "aws", Region: "us-east-1", InstanceType: "p5.48xlarge", GPU: "H100-80GB",
		GPUCount: 8, GPUMemoryGB: 80, Market: OnDemand, PricePerHour: price, Source: "test",
		ObservedAt: time.Date(2026, 9, 13, 0, 0, 0, 0, time.UTC)}
}

func TestCatalogAdd(t *testing.T) {
	tests := []struct {
		name        string
		offer       Offer
		currency    string
		wantErr     error
		wantOffers  int
		wantSkipped string
	}{
		{name: "valid", offer: offer(55.04), currency: "USD", wantOffers: 1},
		{name: "lower-case currency", offer: offer(55.04), currency: "usd", wantOffers: 1},
		{name: "zero price skipped", offer: offer(0), currency: "USD", wantSkipped: SkipZeroPrice},
		{name: "negative price", offer: offer(-1), currency: "USD", wantErr: ErrBadPrice},
		{name: "NaN price", offer: offer(math.NaN()), currency: "USD", wantErr: ErrBadPrice},
		{name: "infinite price", offer: offer(math.Inf(1)), currency: "USD", wantErr: ErrBadPrice},
		{name: "euro", offer: offer(50), currency: "EUR", wantErr: ErrCurrency},
		{name: "no gpu", offer: func() Offer { o := offer(1); o.GPU = ""; return o }(), currency: "USD", wantErr: ErrBadOffer},
		{name: "bad market", offer: func() Offer { o := offer(1); o.Market = "x"; return o }(), currency: "USD", wantErr: ErrBadOffer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Catalog
			err := c.Add(tt.offer, tt.currency)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Add error = %v, want %v", err, tt.wantErr)
			}
			if len(c.Offers) != tt.wantOffers {
				t.Errorf("offers = %d, want %d", len(c.Offers), tt.wantOffers)
			}
			if tt.wantSkipped != "" && c.Skipped[tt.wantSkipped] != 1 {
				t.Errorf("skipped = %v, want one %s", c.Skipped, tt.wantSkipped)
			}
		})
	}
}

// TestCatalogDuplicateKeepsLowerAndWarns: two rows for one offer used to collapse silently to
// the first; the lower price wins whatever the order, and a warning names both rows.
func TestCatalogDuplicateKeepsLowerAndWarns(t *testing.T) {
	tests := []struct {
		name        string
		prices      []float64
		wantPrice   float64
		wantWhere   string
		wantWarning string
	}{
		{name: "lower first", prices: []float64{55.04, 60}, wantPrice: 55.04, wantWhere: "f.csv:1",
			wantWarning: "f.csv:1 at 55.04 USD/h and f.csv:2 at 60 USD/h; kept the lower price (f.csv:1)"},
		{name: "lower last", prices: []float64{60, 55.04}, wantPrice: 55.04, wantWhere: "f.csv:2",
			wantWarning: "f.csv:1 at 60 USD/h and f.csv:2 at 55.04 USD/h; kept the lower price (f.csv:2)"},
		{name: "same price twice is no conflict", prices: []float64{60, 60}, wantPrice: 60, wantWhere: "f.csv:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Catalog
			for i, p := range tt.prices {
				if err := c.AddFrom(offer(p), "USD", "f.csv:"+strconv.Itoa(i+1)); err != nil {
					t.Fatal(err)
				}
			}
			if len(c.Offers) != 1 || c.Offers[0].PricePerHour != tt.wantPrice || c.Skipped[SkipDuplicate] != 1 {
				t.Fatalf("catalog = %+v, want one offer at %v and one duplicate counted", c, tt.wantPrice)
			}
			if got := c.Origin(c.Offers[0].Key()); got != tt.wantWhere {
				t.Errorf("origin = %q, want %q", got, tt.wantWhere)
			}
			switch {
			case tt.wantWarning == "" && len(c.Warnings) != 0:
				t.Errorf("warnings = %q, want none", c.Warnings)
			case tt.wantWarning != "" && (len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], tt.wantWarning) ||
				!strings.Contains(c.Warnings[0], c.Offers[0].Key())):
				t.Errorf("warnings = %q, want one naming the key and %q", c.Warnings, tt.wantWarning)
			}
		})
	}
}

func TestCatalogWarningsAreBounded(t *testing.T) {
	var c Catalog
	for i := range 3 * maxWarnings {
		if err := c.AddFrom(offer(float64(100-i)), "USD", strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.Warnings) != maxWarnings || c.Skipped[SkipDuplicate] != 3*maxWarnings-1 {
		t.Fatalf("%d warnings, %d duplicates; want %d kept and every duplicate counted", len(c.Warnings), c.Skipped[SkipDuplicate], maxWarnings)
	}
}

func TestMergeKeepsOriginsAndWarnings(t *testing.T) {
	var a, b Catalog
	_ = a.AddFrom(offer(60), "USD", "a.csv:2")
	_ = b.AddFrom(offer(50), "USD", "b.csv:9")
	b.Warnings = []string{"from b"}
	a.Merge(b)
	if len(a.Offers) != 1 || a.Offers[0].PricePerHour != 50 || a.Origin(a.Offers[0].Key()) != "b.csv:9" ||
		len(a.Warnings) != 2 || a.Warnings[1] != "from b" {
		t.Fatalf("merged = %+v origin %q", a, a.Origin(a.Offers[0].Key()))
	}
}

func TestPricePerGPUHour(t *testing.T) {
	tests := []struct {
		name  string
		offer Offer
		want  float64
	}{
		{name: "eight GPUs", offer: offer(55.04), want: 6.88},
		{name: "no GPUs", offer: func() Offer { o := offer(1); o.GPUCount = 0; return o }(), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.offer.PricePerGPUHour(); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("PricePerGPUHour = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestKeyIgnoresPriceAndTime(t *testing.T) {
	a, b := offer(1), offer(2)
	b.ObservedAt = b.ObservedAt.Add(time.Hour)
	if a.Key() != b.Key() {
		t.Fatalf("keys differ: %q vs %q", a.Key(), b.Key())
	}
	b.Market = Spot
	if a.Key() == b.Key() {
		t.Fatalf("spot and on-demand share key %q", a.Key())
	}
}
