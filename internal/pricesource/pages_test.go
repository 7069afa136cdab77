package pricesource

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// TestPaginationCycleIsAnError: a next token or link that points back at a page already read
// fails the fetch as a cycle after the pages it had, instead of being followed to a page
// limit (Azure, GCP) or for ever (AWS).
func TestPaginationCycleIsAnError(t *testing.T) {
	azure1 := fixture(t, "azure-retail-prices-gpu-page1.json")
	var azureNext string
	edit(t, azure1, func(d map[string]any) { azureNext = d["NextPageLink"].(string) })
	azure2 := edit(t, fixture(t, "azure-retail-prices-gpu-page2.json"), func(d map[string]any) { d["NextPageLink"] = azureNext })
	gcp1 := fixture(t, "gcp-billing-skus-gpu-page1.json")
	var gcpToken string
	edit(t, gcp1, func(d map[string]any) { gcpToken = d["nextPageToken"].(string) })
	gcp2 := edit(t, fixture(t, "gcp-billing-skus-gpu-page2.json"), func(d map[string]any) { d["nextPageToken"] = gcpToken })
	spot := xmlReply(fixture(t, "aws-describe-spot-price-history.xml"), 200)
	products := jsonReply(withNextToken(t, fixture(t, "aws-pricing-getproducts-gpu.json"), "tok-A"), 200)
	tests := []struct {
		name    string
		replies []reply
		build   func(t *testing.T, endpoint string) fetcher
	}{
		{name: "aws-spot", replies: []reply{spot, spot, spot}, build: func(t *testing.T, u string) fetcher {
			return httpSources()[0].build(t, u, Limits{})
		}},
		{name: "aws-ondemand", replies: []reply{products, products, products}, build: func(t *testing.T, u string) fetcher {
			return httpSources()[1].build(t, u, Limits{})
		}},
		{name: "azure", replies: []reply{{match: azurePage1, body: azure1}, {match: azurePage2, body: azure2}, {match: azurePage2, body: azure2}},
			build: func(_ *testing.T, u string) fetcher { return &AzureRetail{Region: "eastus", Endpoint: u} }},
		{name: "gcp", replies: []reply{{body: gcp1}, {body: gcp2}, {body: gcp2}},
			build: func(_ *testing.T, u string) fetcher { return &GCPBilling{APIKey: gcpFaultKey, Endpoint: u} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, tt.replies...)
			cat, err := tt.build(t, srv.URL).Fetch(context.Background(), at)
			wantKind(t, err, KindAPI)
			if !errors.Is(err, ErrPageCycle) || !strings.Contains(err.Error(), "pagination cycle") {
				t.Errorf("error %v does not name a pagination cycle", err)
			}
			if len(srv.requests) != 2 || len(cat.Offers) != 0 {
				t.Errorf("requests = %d, offers = %d; want the cycle seen on the second page and no offers", len(srv.requests), len(cat.Offers))
			}
			if strings.Contains(err.Error(), gcpFaultKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

// TestWrongBodyWithStatus200IsADecodeError: an HTML page, an empty body, an error document or
// a document of another shape answered with 200 fails the fetch, naming what was expected and
// what came, instead of passing as a catalog with no offers.
func TestWrongBodyWithStatus200IsADecodeError(t *testing.T) {
	const html = `<!DOCTYPE html><html><head><title>503</title></head><body><h1>Service Unavailable</h1></body></html>`
	tests := []struct {
		source  int // index in httpSources
		name    string
		body    string
		wantGot string
	}{
		{source: 0, name: "html", body: html, wantGot: "got a <html> document"},
		{source: 0, name: "empty", body: "", wantGot: "got an empty body"},
		{source: 0, name: "error document", body: `<Response><Errors><Error><Code>InternalError</Code><Message>x</Message></Error></Errors></Response>`, wantGot: "got a <Response> document"},
		{source: 0, name: "wrong root", body: `<?xml version="1.0"?><DescribeInstancesResponse><reservationSet/></DescribeInstancesResponse>`, wantGot: "<DescribeInstancesResponse>"},
		{source: 0, name: "json", body: `{"spotPriceHistorySet":[]}`, wantGot: "no XML element"},
		{source: 1, name: "html", body: html, wantGot: "not JSON"},
		{source: 1, name: "empty", body: "", wantGot: "got an empty body"},
		{source: 1, name: "error document", body: `{"message":"Internal error"}`, wantGot: "keys message"},
		{source: 1, name: "array", body: `[]`, wantGot: "a JSON array"},
		{source: 2, name: "html", body: html, wantGot: "not JSON"},
		{source: 2, name: "empty", body: "", wantGot: "got an empty body"},
		{source: 2, name: "error document", body: `{"error":{"code":"InvalidRequest","message":"x"}}`, wantGot: "keys error"},
		{source: 2, name: "items not an array", body: `{"Items":{"a":1},"Count":1}`, wantGot: "want an array"},
		{source: 3, name: "html", body: html, wantGot: "not JSON"},
		{source: 3, name: "empty object", body: `{}`, wantGot: "got an empty object"},
		{source: 3, name: "error document", body: `{"error":{"code":400,"status":"INVALID_ARGUMENT"}}`, wantGot: "keys error"},
		{source: 3, name: "trailing garbage", body: `{"skus":[]} <html>`, wantGot: "data after the JSON object"},
	}
	for _, tt := range tests {
		src := httpSources()[tt.source]
		t.Run(src.name+"/"+tt.name, func(t *testing.T) {
			srv := newReplay(t, reply{body: []byte(tt.body), header: map[string]string{"Content-Type": src.contentType}})
			cat, err := src.build(t, srv.URL, Limits{}).Fetch(context.Background(), at)
			wantKind(t, err, KindDecode)
			if !strings.Contains(err.Error(), "want ") || !strings.Contains(err.Error(), tt.wantGot) {
				t.Errorf("error %q does not say what was expected and %q", err, tt.wantGot)
			}
			if len(cat.Offers) != 0 {
				t.Errorf("offers = %d from a wrong body", len(cat.Offers))
			}
		})
	}
}

func FuzzParsePriceList(f *testing.F) {
	f.Add(fixture(f, "aws-pricing-getproducts-gpu.json"))
	f.Add([]byte(`{"NextToken":"x","PriceList":null}`))
	f.Add([]byte(`{"PriceList":["{}"],"PriceList":[1]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var cat pricing.Catalog
		_, err := parsePriceList(bytes.NewReader(body), func(_ int, doc string) error {
			p, err := parseAWSProduct([]byte(doc))
			if err != nil {
				return err
			}
			return normalizeProduct(p, "us-east-1", "fuzz", at, &cat)
		})
		if err != nil {
			return
		}
		assertValid(t, cat)
	})
}

func FuzzSniffXMLRoot(f *testing.F) {
	f.Add(fixture(f, "aws-describe-spot-price-history.xml"))
	f.Add([]byte(`<!DOCTYPE html><html></html>`))
	f.Add([]byte(`<?xml version="1.0"?><!-- c --><a:B xmlns:a="x"/>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		prefix, root, err := sniffXMLRoot(bytes.NewReader(body))
		if err != nil {
			return
		}
		if root == "" || !bytes.HasPrefix(body, prefix) {
			t.Fatalf("root %q, prefix %q is not the start of the body", root, prefix)
		}
	})
}
