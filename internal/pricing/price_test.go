package pricing

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestParsePrice: ParseFloat took hexadecimal floats, inf and nan as prices; only decimals pass.
func TestParsePrice(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    float64
		wantErr bool
	}{
		{name: "plain", in: "98.32", want: 98.32},
		{name: "spaces", in: " 1.5 ", want: 1.5},
		{name: "integer", in: "3", want: 3},
		{name: "leading point", in: ".5", want: 0.5},
		{name: "trailing point", in: "5.", want: 5},
		{name: "exponent", in: "1.5E+01", want: 15},
		{name: "negative is syntax, not plausibility", in: "-1", want: -1},
		{name: "tiny is syntax, not plausibility", in: "1e-300", want: 1e-300},
		{name: "hex float", in: "0x1p-2", wantErr: true},
		{name: "hex int", in: "0x10", wantErr: true},
		{name: "inf", in: "inf", wantErr: true},
		{name: "Infinity", in: "+Infinity", wantErr: true},
		{name: "nan", in: "NaN", wantErr: true},
		{name: "underscores", in: "1_000", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "point alone", in: ".", wantErr: true},
		{name: "bare exponent", in: "1e", wantErr: true},
		{name: "overflow", in: "1e400", wantErr: true},
		{name: "comma decimal", in: "1,5", wantErr: true},
		{name: "currency sign", in: "$1.5", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePrice(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrPriceSyntax) || !strings.Contains(err.Error(), strconv.Quote(tt.in)) {
					t.Fatalf("ParsePrice(%q) = %v, %v; want ErrPriceSyntax quoting the input", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParsePrice(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func FuzzParsePrice(f *testing.F) {
	for _, s := range []string{"98.32", "0x1p-2", "inf", "1e-300", "1_0", ".5", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParsePrice(s)
		if err != nil {
			return
		}
		if math.IsNaN(got) || math.IsInf(got, 0) {
			t.Fatalf("ParsePrice(%q) = %v", s, got)
		}
		if strings.ContainsAny(strings.ToLower(s), "xpin_") {
			t.Fatalf("ParsePrice(%q) accepted non-decimal syntax", s)
		}
		want, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if perr != nil || want != got {
			t.Fatalf("ParsePrice(%q) = %v, ParseFloat says %v, %v", s, got, want, perr)
		}
	})
}
