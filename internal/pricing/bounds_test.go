package pricing

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestBoundsCheck: 1e-300 and 1e+300 per hour used to pass as prices; outside the bounds per
// GPU-hour is an error naming the row, the bound and the setting that widens it.
func TestBoundsCheck(t *testing.T) {
	tests := []struct {
		name     string
		bounds   Bounds
		prices   []float64 // per instance-hour of an 8-GPU offer, one offer per price
		wantErr  []string
		wantNone bool
	}{
		{name: "real H100 price", bounds: DefaultBounds, prices: []float64{98.32}, wantNone: true},
		{name: "tiny", bounds: DefaultBounds, prices: []float64{1e-300},
			wantErr: []string{"f.csv:1:", "below the minimum 0.01", "price_bounds.min_per_gpu_hour"}},
		{name: "huge", bounds: DefaultBounds, prices: []float64{1e300},
			wantErr: []string{"f.csv:1:", "above the maximum 100", "price_bounds.max_per_gpu_hour"}},
		{name: "per GPU, not per instance: 8 GPUs at 0.05 is 0.00625 each", bounds: DefaultBounds, prices: []float64{0.05},
			wantErr: []string{"0.00625 USD per GPU-hour"}},
		{name: "widened", bounds: Bounds{MinPerGPUHour: 1e-9, MaxPerGPUHour: 1e6}, prices: []float64{1e-3, 1e6}, wantNone: true},
		{name: "counts the rest", bounds: DefaultBounds, prices: []float64{1e-300, 50, 1e300, 2e300},
			wantErr: []string{"f.csv:1:", "and 2 more offers out of bounds"}},
		{name: "NaN", bounds: DefaultBounds, prices: []float64{math.NaN()}, wantErr: []string{"below the minimum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Catalog
			for i, p := range tt.prices {
				o := offer(p)
				o.Zone = string(rune('a' + i))
				c.Offers = append(c.Offers, o)
				c.setOrigin(o.Key(), "f.csv:"+string(rune('1'+i)))
			}
			err := tt.bounds.Check(c)
			if tt.wantNone {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrImplausiblePrice) {
				t.Fatalf("Check = %v, want ErrImplausiblePrice", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestBoundsCheckNamesKeyWithoutOrigin(t *testing.T) {
	c := Catalog{Offers: []Offer{offer(1e300)}}
	err := DefaultBounds.Check(c)
	if err == nil || !strings.Contains(err.Error(), offer(1).Key()) {
		t.Fatalf("Check = %v, want the offer key named", err)
	}
}

func TestBoundsValidateAndOr(t *testing.T) {
	tests := []struct {
		name      string
		bounds    Bounds
		wantField string
	}{
		{name: "defaults", bounds: DefaultBounds},
		{name: "negative min", bounds: Bounds{MinPerGPUHour: -1, MaxPerGPUHour: 10}, wantField: "min_per_gpu_hour"},
		{name: "inf max", bounds: Bounds{MinPerGPUHour: 0, MaxPerGPUHour: math.Inf(1)}, wantField: "max_per_gpu_hour"},
		{name: "min above max", bounds: Bounds{MinPerGPUHour: 10, MaxPerGPUHour: 5}, wantField: "max_per_gpu_hour"},
		{name: "only max set, min from defaults", bounds: Bounds{MaxPerGPUHour: 500}.Or(DefaultBounds)},
		{name: "only max set, below default min", bounds: Bounds{MaxPerGPUHour: 0.001}.Or(DefaultBounds), wantField: "max_per_gpu_hour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			field, err := tt.bounds.Validate()
			if field != tt.wantField || (err != nil) != (tt.wantField != "") {
				t.Fatalf("Validate(%+v) = %q, %v; want field %q", tt.bounds, field, err, tt.wantField)
			}
		})
	}
	if got := (Bounds{MaxPerGPUHour: 500}).Or(DefaultBounds); got != (Bounds{MinPerGPUHour: 0.01, MaxPerGPUHour: 500}) {
		t.Errorf("Or = %+v", got)
	}
}
