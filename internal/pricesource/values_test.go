package pricesource

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// TestAWSPriceSyntax: strconv.ParseFloat took "0x1p-2", "inf" and "NaN" as AWS prices; a
// price must be written as a decimal, and the error names the instance and zone.
func TestAWSPriceSyntax(t *testing.T) {
	tests := []struct {
		name    string
		price   string
		wantErr bool
	}{
		{name: "decimal", price: "30.182400"},
		{name: "hex float", price: "0x1p-2", wantErr: true},
		{name: "inf", price: "inf", wantErr: true},
		{name: "nan", price: "NaN", wantErr: true},
		{name: "underscores", price: "1_0.5", wantErr: true},
	}
	for _, tt := range tests {
		t.Run("spot "+tt.name, func(t *testing.T) {
			var cat pricing.Catalog
			rows := []spotRow{{Zone: "us-east-1a", InstanceType: "p5.48xlarge", Product: "Linux/UNIX", Price: tt.price, At: at}}
			err := normalizeSpot(rows, "us-east-1", "test", at, &cat)
			if tt.wantErr {
				if !errors.Is(err, pricing.ErrPriceSyntax) || !strings.Contains(err.Error(), "p5.48xlarge in us-east-1a") {
					t.Fatalf("err = %v, want a price syntax error naming the instance and zone", err)
				}
				return
			}
			if err != nil || len(cat.Offers) != 1 || !strings.Contains(cat.Origin(cat.Offers[0].Key()), "p5.48xlarge in us-east-1a") {
				t.Fatalf("err = %v, offers %+v, origin %q", err, cat.Offers, cat.Origin(cat.Offers[0].Key()))
			}
		})
		t.Run("on-demand "+tt.name, func(t *testing.T) {
			var p awsProduct
			dim := map[string]any{"unit": "Hrs", "beginRange": "0", "pricePerUnit": map[string]string{"USD": tt.price}}
			doc, _ := json.Marshal(map[string]any{"terms": map[string]any{"OnDemand": map[string]any{
				"T1": map[string]any{"priceDimensions": map[string]any{"D1": dim}}}}})
			if err := json.Unmarshal(doc, &p); err != nil {
				t.Fatal(err)
			}
			_, _, err := onDemandHourly(p)
			if tt.wantErr != errors.Is(err, pricing.ErrPriceSyntax) || (!tt.wantErr && err != nil) {
				t.Fatalf("err = %v, want syntax error %v", err, tt.wantErr)
			}
		})
	}
}

// TestOffersRememberWhereTheyCameFrom: every API source names the record behind an offer, so
// a bounds error or a duplicate warning points at it.
func TestOffersRememberWhereTheyCameFrom(t *testing.T) {
	tests := []struct {
		name      string
		normalize func(t *testing.T, cat *pricing.Catalog) error
		wantStart string
	}{
		{name: "vast", wantStart: "offer ", normalize: func(t *testing.T, cat *pricing.Catalog) error {
			offers, err := parseVast(fixture(t, "vast-bundles-offers.json"))
			if err != nil {
				t.Fatal(err)
			}
			return normalizeVast(offers, "vast", at, cat)
		}},
		{name: "lambda", wantStart: "instance type gpu_", normalize: func(t *testing.T, cat *pricing.Catalog) error {
			types, err := parseLambda(fixture(t, "lambda-instance-types.json"))
			if err != nil {
				t.Fatal(err)
			}
			return normalizeLambda(types, "lambda", at, cat)
		}},
		{name: "runpod", wantStart: "gpu type ", normalize: func(t *testing.T, cat *pricing.Catalog) error {
			types, _, err := parseRunPod(fixture(t, "runpod-graphql-gputypes.json"))
			if err != nil {
				t.Fatal(err)
			}
			return normalizeRunPod(types, "runpod", at, cat)
		}},
		{name: "aws on-demand", wantStart: "sku ", normalize: func(t *testing.T, cat *pricing.Catalog) error {
			var env struct{ PriceList []string }
			if err := json.Unmarshal(fixture(t, "aws-pricing-getproducts-gpu.json"), &env); err != nil {
				t.Fatal(err)
			}
			for _, doc := range env.PriceList {
				p, err := parseAWSProduct([]byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				if err := normalizeProduct(p, "us-east-1", "aws", at, cat); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cat pricing.Catalog
			if err := tt.normalize(t, &cat); err != nil {
				t.Fatal(err)
			}
			if len(cat.Offers) == 0 {
				t.Fatal("no offers")
			}
			for _, o := range cat.Offers {
				if got := cat.Origin(o.Key()); !strings.HasPrefix(got, tt.wantStart) || len(got) == len(tt.wantStart) {
					t.Errorf("offer %s comes from %q, want %q and an id", o.Key(), got, tt.wantStart)
				}
			}
		})
	}
}
