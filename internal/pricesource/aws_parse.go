package pricesource

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2t "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	pt "github.com/aws/aws-sdk-go-v2/service/pricing/types"

	"github.com/bursar-dev/bursar/internal/pricing"
)

func ec2types(t string) ec2t.InstanceType { return ec2t.InstanceType(t) }

// spotRow is one spot price change as EC2 reports it.
type spotRow struct {
	Zone, InstanceType, Product, Price string
	At                                 time.Time
}

func spotRows(out *ec2.DescribeSpotPriceHistoryOutput) []spotRow {
	rows := make([]spotRow, 0, len(out.SpotPriceHistory))
	for _, sp := range out.SpotPriceHistory {
		rows = append(rows, spotRow{Zone: aws.ToString(sp.AvailabilityZone), InstanceType: string(sp.InstanceType),
			Product: string(sp.ProductDescription), Price: aws.ToString(sp.SpotPrice), At: aws.ToTime(sp.Timestamp)})
	}
	return rows
}

// normalizeSpot keeps the newest price per instance type and zone: the one in effect now.
func normalizeSpot(rows []spotRow, region, source string, at time.Time, cat *pricing.Catalog) error {
	newest := map[[2]string]spotRow{}
	var order [][2]string
	for _, r := range rows {
		if r.Product != "Linux/UNIX" {
			cat.Skip(pricing.SkipExcluded)
			continue
		}
		k := [2]string{r.InstanceType, r.Zone}
		prev, seen := newest[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || r.At.After(prev.At) {
			newest[k] = r
		}
	}
	for _, k := range order {
		r := newest[k]
		inst, ok := pricing.AWSInstance(r.InstanceType)
		if !ok {
			awsUnmapped(cat, r.InstanceType)
			continue
		}
		price, err := pricing.ParsePrice(r.Price)
		if err != nil {
			return fmt.Errorf("%s in %s: spot %w", r.InstanceType, r.Zone, err)
		}
		o := pricing.Offer{Provider: "aws", Region: region, Zone: r.Zone, InstanceType: r.InstanceType,
			GPU: inst.GPU.Name, GPUCount: inst.Count, GPUMemoryGB: inst.GPU.MemoryGB, Market: pricing.Spot,
			PricePerHour: price, Source: source, ObservedAt: at}
		where := fmt.Sprintf("spot price of %s in %s at %s", r.InstanceType, r.Zone, r.At.UTC().Format(time.RFC3339))
		if err := cat.AddFrom(o, "USD", where); err != nil {
			return err
		}
	}
	return nil
}

// awsUnmapped counts an instance type with no GPU mapping: an ML ASIC is not a GPU; anything
// else is an unknown GPU, reported for someone to add to the table.
func awsUnmapped(cat *pricing.Catalog, instanceType string) {
	if _, asic := pricing.AWSNotGPU(instanceType); asic {
		cat.Skip(pricing.SkipNotGPU)
		return
	}
	cat.UnknownGPU("aws", instanceType)
}

func productFilters(region string) []pt.Filter {
	terms := [][2]string{
		{"regionCode", region}, {"instanceFamily", "GPU instance"}, {"operatingSystem", "Linux"},
		{"tenancy", "Shared"}, {"preInstalledSw", "NA"}, {"capacitystatus", "Used"},
		{"licenseModel", "No License required"}, {"marketoption", "OnDemand"},
	}
	out := make([]pt.Filter, len(terms))
	for i, t := range terms {
		out[i] = pt.Filter{Type: pt.FilterTypeTermMatch, Field: aws.String(t[0]), Value: aws.String(t[1])}
	}
	return out
}

// awsProduct is one decoded Price List document.
type awsProduct struct {
	Product struct {
		ProductFamily string            `json:"productFamily"`
		SKU           string            `json:"sku"`
		Attributes    map[string]string `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				BeginRange   string            `json:"beginRange"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parseAWSProduct decodes one PriceList element (a JSON document sent as a string).
func parseAWSProduct(doc []byte) (awsProduct, error) {
	var p awsProduct
	if err := json.Unmarshal(doc, &p); err != nil {
		return awsProduct{}, err
	}
	if p.Product.Attributes == nil {
		return awsProduct{}, fmt.Errorf("product has no attributes")
	}
	return p, nil
}

// productWanted re-checks, client side, the discriminators the query filters on, so that a
// Windows, dedicated or capacity-block product can never pass as the on-demand Linux price.
var productWanted = map[string]string{
	"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used",
	"licenseModel": "No License required", "marketoption": "OnDemand",
}

func normalizeProduct(p awsProduct, region, source string, at time.Time, cat *pricing.Catalog) error {
	a := p.Product.Attributes
	for k, want := range productWanted {
		if v, ok := a[k]; ok && v != want {
			cat.Skip(pricing.SkipExcluded)
			return nil
		}
	}
	if a["regionCode"] != region || a["instanceType"] == "" {
		cat.Skip(pricing.SkipExcluded)
		return nil
	}
	it := a["instanceType"]
	inst, ok := pricing.AWSInstance(it)
	if !ok {
		awsUnmapped(cat, it)
		return nil
	}
	if n, err := strconv.Atoi(a["gpu"]); err == nil && n != inst.Count {
		cat.UnknownGPU("aws", fmt.Sprintf("%s (price list says %d GPUs, table %d)", it, n, inst.Count))
		return nil
	}
	price, currency, err := onDemandHourly(p)
	if err != nil {
		return fmt.Errorf("%s: %w", it, err)
	}
	o := pricing.Offer{Provider: "aws", Region: region, InstanceType: it, GPU: inst.GPU.Name,
		GPUCount: inst.Count, GPUMemoryGB: inst.GPU.MemoryGB, Market: pricing.OnDemand,
		PricePerHour: price, Source: source, ObservedAt: at}
	return cat.AddFrom(o, currency, "sku "+p.Product.SKU)
}

// onDemandHourly is the hourly rate of the first tier, in its currency (USD, or CNY in China).
func onDemandHourly(p awsProduct) (float64, string, error) {
	for _, term := range p.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			if dim.Unit != "Hrs" || (dim.BeginRange != "" && dim.BeginRange != "0") {
				continue
			}
			if len(dim.PricePerUnit) != 1 {
				return 0, "", fmt.Errorf("want one currency in pricePerUnit, got %d", len(dim.PricePerUnit))
			}
			for cur, v := range dim.PricePerUnit {
				f, err := pricing.ParsePrice(v)
				if err != nil {
					return 0, "", err
				}
				return f, cur, nil
			}
		}
	}
	return 0, "", fmt.Errorf("no hourly on-demand price")
}
