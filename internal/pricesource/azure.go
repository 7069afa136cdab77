package pricesource

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// AzureEndpoint is the public Azure Retail Prices API.
const AzureEndpoint = "https://prices.azure.com/api/retail/prices"

// azurePageSize is the most rows the API returns on a page; a full page with no NextPageLink
// triggers the $skip fallback for the 2023 incident in which NextPageLink came back empty.
const azurePageSize = 1000

// AzureRetail reads GPU VM prices for one region from the anonymous Azure Retail Prices API.
type AzureRetail struct {
	Region   string
	Endpoint string       // defaults to AzureEndpoint
	HTTP     *http.Client // defaults to http.DefaultClient
	Limits   Limits       // per request: header and idle timeouts, body cap
	MaxPages int          // guard against endless paging; defaults to 200
}

// Name identifies the source in metrics and events.
func (a *AzureRetail) Name() string { return "azure-retail:" + a.Region }

// Fetch reads every page for the region and normalizes it. Any failed page fails the fetch: a
// partial catalog is never returned. A NextPageLink that points back at a page already read
// fails it as a cycle.
func (a *AzureRetail) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	c := client{source: a.Name(), http: a.HTTP, limits: a.Limits}
	next, err := a.firstPage()
	if err != nil {
		return pricing.Catalog{}, err
	}
	var cat pricing.Catalog
	maxPages := a.MaxPages
	if maxPages <= 0 {
		maxPages = 200
	}
	pages := map[string]int{} // page URL -> the page number it was read as
	for n := 1; next != nil; n++ {
		if n > maxPages {
			return pricing.Catalog{}, c.decodeError(redactURL(next), fmt.Errorf("more than %d pages; stopping", maxPages))
		}
		if first, ok := pages[next.String()]; ok {
			return pricing.Catalog{}, &Error{Source: a.Name(), Where: redactURL(next), Kind: KindAPI,
				Err: fmt.Errorf("%w: page %d's NextPageLink (%s) is page %d again", ErrPageCycle, n-1, skipOf(next), first)}
		}
		pages[next.String()] = n
		page, err := a.page(ctx, c, next, at, &cat)
		if err != nil {
			return pricing.Catalog{}, fmt.Errorf("reading azure prices page %d: %w", n, err)
		}
		if next, err = a.nextPage(next, page); err != nil {
			return pricing.Catalog{}, c.decodeError(redactURL(next), err)
		}
	}
	cat.Sort()
	return cat, nil
}

// page reads one page, normalizing its rows into cat as they stream in.
func (a *AzureRetail) page(ctx context.Context, c client, u *url.URL, at time.Time, cat *pricing.Catalog) (azurePage, error) {
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	var page azurePage
	var rowErr error
	err := c.stream(ctx, req, func(r io.Reader) error {
		var err error
		page, err = parseAzurePage(r, func(it azureItem) error {
			rowErr = normalizeAzure([]azureItem{it}, a.Region, a.Name(), at, cat)
			return rowErr
		})
		return err
	})
	if rowErr != nil {
		return azurePage{}, c.invalid(redactURL(u), rowErr)
	}
	return page, err
}

// skipOf names a page by its $skip for messages, since the rest of its query is the filter.
func skipOf(u *url.URL) string {
	if s := u.Query().Get("$skip"); s != "" {
		return "$skip=" + s
	}
	return "the first page"
}

func (a *AzureRetail) endpoint() string {
	if a.Endpoint != "" {
		return a.Endpoint
	}
	return AzureEndpoint
}

func (a *AzureRetail) firstPage() (*url.URL, error) {
	u, err := url.Parse(a.endpoint())
	if err != nil {
		return nil, fmt.Errorf("azure endpoint %q: %w", a.endpoint(), err)
	}
	q := u.Query()
	q.Set("api-version", "2023-01-01-preview")
	q.Set("$filter", fmt.Sprintf("serviceName eq 'Virtual Machines' and armRegionName eq '%s'", a.Region))
	u.RawQuery = q.Encode()
	return u, nil
}

// nextPage follows NextPageLink, re-based onto the configured endpoint's scheme and host so
// that a test server or a proxy stays in the loop, and falls back to $skip when a full page
// arrives without a link.
func (a *AzureRetail) nextPage(cur *url.URL, page azurePage) (*url.URL, error) {
	if page.NextPageLink == "" {
		if page.Count < azurePageSize || page.Items == 0 {
			return nil, nil
		}
		u := *cur
		q := u.Query()
		skip, _ := strconv.Atoi(q.Get("$skip"))
		q.Set("$skip", strconv.Itoa(skip+page.Count))
		u.RawQuery = q.Encode()
		return &u, nil
	}
	link, err := url.Parse(page.NextPageLink)
	if err != nil {
		return nil, fmt.Errorf("NextPageLink: %w", err)
	}
	base, _ := url.Parse(a.endpoint())
	link.Scheme, link.Host, link.User = base.Scheme, base.Host, nil
	link.Path = base.Path
	return link, nil
}

// azurePage is one Retail Prices page without its rows, which stream to the caller.
type azurePage struct {
	BillingCurrency string
	NextPageLink    string
	Count           int
	Items           int // rows read
}

type azureItem struct {
	CurrencyCode         string  `json:"currencyCode"`
	RetailPrice          float64 `json:"retailPrice"`
	ArmRegionName        string  `json:"armRegionName"`
	EffectiveStartDate   string  `json:"effectiveStartDate"`
	MeterName            string  `json:"meterName"`
	ProductName          string  `json:"productName"`
	SkuName              string  `json:"skuName"`
	ServiceName          string  `json:"serviceName"`
	UnitOfMeasure        string  `json:"unitOfMeasure"`
	Type                 string  `json:"type"`
	ReservationTerm      string  `json:"reservationTerm"`
	IsPrimaryMeterRegion *bool   `json:"isPrimaryMeterRegion"`
	ArmSkuName           string  `json:"armSkuName"`
}

// azureShape is what a Retail Prices page must look like, for decode errors.
const azureShape = "a Retail Prices page (a JSON object with an Items array)"

// parseAzurePage decodes one Retail Prices page from r, handing each row to row as it is read.
// A body of any other shape (an error document, HTML, a JSON array) is an error naming what
// was expected and what came.
func parseAzurePage(r io.Reader, row func(azureItem) error) (azurePage, error) {
	var p azurePage
	items := false
	dec := json.NewDecoder(r)
	seen, err := walkObject(dec, azureShape, jsonFields{
		"BillingCurrency": readString(&p.BillingCurrency),
		"NextPageLink":    readString(&p.NextPageLink),
		"Count":           func(dec *json.Decoder) error { return dec.Decode(&p.Count) },
		"Items": func(dec *json.Decoder) (err error) {
			items, err = walkArray(dec, func(_ int, dec *json.Decoder) error {
				var it azureItem
				if err := dec.Decode(&it); err != nil {
					return err
				}
				p.Items++
				return row(it)
			})
			return err
		},
	})
	if err != nil {
		return azurePage{}, err
	}
	if !items {
		return azurePage{}, missing(azureShape, seen)
	}
	return p, nil
}

// normalizeAzure turns GPU VM rows into offers: Linux pay-as-you-go and spot per hour, and
// one-year reservations spread over the year's hours. Windows, Low Priority, DevTest and
// secondary-meter rows are skipped as excluded.
func normalizeAzure(items []azureItem, region, source string, at time.Time, cat *pricing.Catalog) error {
	for _, it := range items {
		market, hours, ok := azureMarket(it)
		if !ok || it.ArmRegionName != region {
			cat.Skip(pricing.SkipExcluded)
			continue
		}
		inst, ok := pricing.AzureSKU(it.ArmSkuName)
		switch {
		case pricing.AzureFractional(it.ArmSkuName):
			cat.Skip(pricing.SkipFractional)
			continue
		case !ok && pricing.AzureMaybeGPU(it.ArmSkuName):
			cat.UnknownGPU("azure", it.ArmSkuName)
			continue
		case !ok:
			cat.Skip(pricing.SkipNotGPU)
			continue
		}
		o := pricing.Offer{Provider: "azure", Region: it.ArmRegionName, InstanceType: it.ArmSkuName,
			GPU: inst.GPU.Name, GPUCount: inst.Count, GPUMemoryGB: inst.GPU.MemoryGB, Market: market,
			PricePerHour: it.RetailPrice / hours, Source: source, ObservedAt: at}
		if err := cat.Add(o, it.CurrencyCode); err != nil {
			return err
		}
	}
	return nil
}

// azureMarket classifies a row: its market and the hours its price covers.
func azureMarket(it azureItem) (pricing.Market, float64, bool) {
	if it.ServiceName != "Virtual Machines" || it.UnitOfMeasure != "1 Hour" ||
		(it.IsPrimaryMeterRegion != nil && !*it.IsPrimaryMeterRegion) {
		return "", 0, false
	}
	p := it.ProductName
	if strings.HasSuffix(p, " Windows") || strings.HasSuffix(p, " Win") ||
		strings.Contains(p, "Cloud Services") || strings.Contains(p, "CloudServices") {
		return "", 0, false
	}
	if strings.HasSuffix(it.SkuName, " Low Priority") || strings.HasSuffix(it.MeterName, " Low Priority") {
		return "", 0, false
	}
	switch it.Type {
	case "Consumption":
		if strings.HasSuffix(it.SkuName, " Spot") || strings.HasSuffix(it.MeterName, " Spot") {
			return pricing.Spot, 1, true
		}
		return pricing.OnDemand, 1, true
	case "Reservation":
		if it.ReservationTerm == "1 Year" { // the price is the total for the term
			return pricing.Reserved, 8760, true
		}
	}
	return "", 0, false
}
