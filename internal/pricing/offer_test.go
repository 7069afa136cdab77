package pricing

import (
	"errors"
	"math"
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

func TestCatalogDuplicateKeepsFirst(t *testing.T) {
	var c Catalog
	for _, p := range []float64{55.04, 60} {
		if err := c.Add(offer(p), "USD"); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.Offers) != 1 || c.Offers[0].PricePerHour != 55.04 || c.Skipped[SkipDuplicate] != 1 {
		t.Fatalf("catalog = %+v, want the first offer kept and one duplicate counted", c)
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
