package pricesource

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/bursar-dev/bursar/internal/pricing"
)

const awsTestSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY"

func awsOpts(endpoint string) AWSOptions {
	return AWSOptions{Region: "us-east-1", Endpoint: endpoint,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", awsTestSecret, "")}
}

func formValue(body []byte, key string) string {
	v, _ := url.ParseQuery(string(body))
	return v.Get(key)
}

func xmlReply(body []byte, status int) reply {
	return reply{status: status, body: body, header: map[string]string{"Content-Type": "text/xml;charset=UTF-8"}}
}

func TestAWSSpotReplay(t *testing.T) {
	var tokens []string
	page1 := xmlReply(fixture(t, "aws-describe-spot-price-history.xml"), 200)
	page1.request = func(r *http.Request, body []byte) { tokens = append(tokens, formValue(body, "NextToken")) }
	page2 := xmlReply(fixture(t, "aws-describe-spot-price-history-page2-empty.xml"), 200)
	page2.request = page1.request
	srv := newReplay(t, page1, page2)
	src, err := NewAWSSpot(context.Background(), awsOpts(srv.URL), []string{"p5.48xlarge", "p4d.24xlarge", "g5.xlarge", "g6.xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := src.Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"aws|us-east-1|us-east-1a|p5.48xlarge|spot|H100-80GB|8":  30.1824,
		"aws|us-east-1|us-east-1b|p5.48xlarge|spot|H100-80GB|8":  31.4407,
		"aws|us-east-1|us-east-1a|p4d.24xlarge|spot|A100-40GB|8": 9.8353,
		"aws|us-east-1|us-east-1c|g5.xlarge|spot|A10G|1":         0.4253,
		"aws|us-east-1|us-east-1d|g6.xlarge|spot|L4|1":           0.3638,
	}
	assertOffers(t, cat, want)
	if len(tokens) != 2 || tokens[0] != "" || !strings.HasPrefix(tokens[1], "eyJ") {
		t.Errorf("NextToken sent = %q, want none then the first page's token", tokens)
	}
	form, _ := url.ParseQuery(string(srv.bodies[0]))
	if form.Get("Action") != "DescribeSpotPriceHistory" || form.Get("ProductDescription.1") != "Linux/UNIX" ||
		form.Get("InstanceType.1") != "p5.48xlarge" {
		t.Errorf("request form = %v", form)
	}
}

func assertOffers(t *testing.T, cat pricing.Catalog, want map[string]float64) {
	t.Helper()
	if len(cat.Offers) != len(want) {
		t.Errorf("offers = %d, want %d", len(cat.Offers), len(want))
	}
	for _, o := range cat.Offers {
		w, ok := want[o.Key()]
		if !ok || math.Abs(o.PricePerHour-w) > 1e-9 {
			t.Errorf("offer %s at %v; want present at %v", o.Key(), o.PricePerHour, w)
		}
	}
}

func TestAWSSpotFailures(t *testing.T) {
	unauthorized := fixture(t, "aws-ec2-error-unauthorized.xml")
	throttled := []byte(`<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>x</RequestID></Response>`)
	tests := []struct {
		name     string
		reply    reply
		wantKind Kind
	}{
		{name: "unauthorized operation", reply: xmlReply(unauthorized, 403), wantKind: KindAuth},
		{name: "401", reply: xmlReply([]byte(`<Response><Errors><Error><Code>AuthFailure</Code><Message>no</Message></Error></Errors></Response>`), 401), wantKind: KindAuth},
		{name: "request limit exceeded", reply: xmlReply(throttled, 503), wantKind: KindRateLimited},
		{name: "429", reply: reply{status: 429, header: map[string]string{"Retry-After": "4"}}, wantKind: KindRateLimited},
		{name: "500", reply: xmlReply([]byte(`<Response><Errors><Error><Code>InternalError</Code><Message>x</Message></Error></Errors></Response>`), 500), wantKind: KindServer},
		{name: "truncated", reply: xmlReply(fixture(t, "aws-describe-spot-price-history.xml")[:600], 200), wantKind: KindDecode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplay(t, tt.reply)
			src, err := NewAWSSpot(context.Background(), awsOpts(srv.URL), nil)
			if err != nil {
				t.Fatal(err)
			}
			cat, err := src.Fetch(context.Background(), at)
			e := wantKind(t, err, tt.wantKind)
			if tt.name == "429" && e.RetryAfter.Seconds() != 4 {
				t.Errorf("RetryAfter = %v, want 4s", e.RetryAfter)
			}
			if strings.Contains(err.Error(), awsTestSecret) {
				t.Errorf("error leaks the secret key: %v", err)
			}
			if len(cat.Offers) != 0 {
				t.Errorf("failed fetch returned offers")
			}
			if len(srv.requests) != 1 {
				t.Errorf("requests = %d; the SDK must not retry on its own", len(srv.requests))
			}
		})
	}
}

func TestNormalizeSpot(t *testing.T) {
	tests := []struct {
		name        string
		rows        []spotRow
		wantPrice   float64
		wantErr     bool
		wantUnknown string
		wantNotGPU  int
	}{
		{name: "newest wins whatever the order", rows: []spotRow{
			{Zone: "a", InstanceType: "g5.xlarge", Product: "Linux/UNIX", Price: "0.40", At: at.Add(-2e9)},
			{Zone: "a", InstanceType: "g5.xlarge", Product: "Linux/UNIX", Price: "0.45", At: at.Add(-1e9)},
		}, wantPrice: 0.45},
		{name: "windows ignored", rows: []spotRow{
			{Zone: "a", InstanceType: "g5.xlarge", Product: "Windows", Price: "0.90", At: at},
			{Zone: "a", InstanceType: "g5.xlarge", Product: "Linux/UNIX", Price: "0.40", At: at.Add(-1e9)},
		}, wantPrice: 0.40},
		{name: "bad price", rows: []spotRow{{Zone: "a", InstanceType: "g5.xlarge", Product: "Linux/UNIX", Price: "abc"}}, wantErr: true},
		{name: "negative price", rows: []spotRow{{Zone: "a", InstanceType: "g5.xlarge", Product: "Linux/UNIX", Price: "-1"}}, wantErr: true},
		{name: "unknown gpu type", rows: []spotRow{{Zone: "a", InstanceType: "p9.96xlarge", Product: "Linux/UNIX", Price: "1"}}, wantUnknown: "aws:p9.96xlarge"},
		{name: "inferentia is not a gpu", rows: []spotRow{{Zone: "a", InstanceType: "inf1.xlarge", Product: "Linux/UNIX", Price: "1"}}, wantNotGPU: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cat pricing.Catalog
			err := normalizeSpot(tt.rows, "us-east-1", "t", at, &cat)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantPrice != 0 && (len(cat.Offers) != 1 || cat.Offers[0].PricePerHour != tt.wantPrice) {
				t.Errorf("offers = %+v, want one at %v", cat.Offers, tt.wantPrice)
			}
			if tt.wantUnknown != "" && cat.Unknown[tt.wantUnknown] != 1 {
				t.Errorf("unknown = %v", cat.Unknown)
			}
			if cat.Skipped[pricing.SkipNotGPU] != tt.wantNotGPU {
				t.Errorf("not_gpu = %d, want %d", cat.Skipped[pricing.SkipNotGPU], tt.wantNotGPU)
			}
		})
	}
}

func jsonReply(body []byte, status int) reply {
	return reply{status: status, body: body, header: map[string]string{"Content-Type": "application/x-amz-json-1.1"}}
}

// withNextToken adds a NextToken to a GetProducts page.
func withNextToken(t *testing.T, body []byte, token string) []byte {
	return edit(t, body, func(d map[string]any) { d["NextToken"] = token })
}

func TestAWSOnDemandReplay(t *testing.T) {
	// Page 1 is the recorded capacity-block product ($0.00, marketoption CapacityBlock), which
	// must never become an offer; page 2 the four GPU products.
	page1 := jsonReply(withNextToken(t, fixture(t, "aws-pricing-getproducts-p5-capacityblock-pitfall.json"), "tok-2"), 200)
	page2 := jsonReply(fixture(t, "aws-pricing-getproducts-gpu.json"), 200)
	srv := newReplay(t, page1, page2)
	src, err := NewAWSOnDemand(context.Background(), awsOpts(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := src.Fetch(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	assertOffers(t, cat, map[string]float64{
		"aws|us-east-1||p4d.24xlarge|on_demand|A100-40GB|8": 21.957642,
		"aws|us-east-1||p5.48xlarge|on_demand|H100-80GB|8":  55.04,
		"aws|us-east-1||g5.2xlarge|on_demand|A10G|1":        1.212,
		"aws|us-east-1||g6.xlarge|on_demand|L4|1":           0.8048,
	})
	if cat.Skipped[pricing.SkipExcluded] != 1 {
		t.Errorf("skipped = %v, want the capacity block excluded", cat.Skipped)
	}
	var req struct {
		ServiceCode string
		NextToken   string
		Filters     []struct{ Field, Value string }
	}
	if err := json.Unmarshal(srv.bodies[1], &req); err != nil {
		t.Fatal(err)
	}
	if req.ServiceCode != "AmazonEC2" || req.NextToken != "tok-2" {
		t.Errorf("second request = %+v", req)
	}
	if got := srv.requests[0].Header.Get("X-Amz-Target"); got != "AWSPriceListService.GetProducts" {
		t.Errorf("X-Amz-Target = %q", got)
	}
}

func TestAWSOnDemandBadProducts(t *testing.T) {
	gpu := fixture(t, "aws-pricing-getproducts-gpu.json")
	setProduct := func(f func(p map[string]any)) []byte {
		return edit(t, gpu, func(d map[string]any) {
			list := d["PriceList"].([]any)
			var p map[string]any
			_ = json.Unmarshal([]byte(list[0].(string)), &p)
			f(p)
			b, _ := json.Marshal(p)
			list[0] = string(b)
		})
	}
	setPrice := func(cur, v string) func(map[string]any) {
		return func(p map[string]any) {
			for _, term := range p["terms"].(map[string]any)["OnDemand"].(map[string]any) {
				for _, dim := range term.(map[string]any)["priceDimensions"].(map[string]any) {
					dim.(map[string]any)["pricePerUnit"] = map[string]any{cur: v}
				}
			}
		}
	}
	tests := []struct {
		name        string
		body        []byte
		status      int
		wantKind    Kind
		wantUnknown string
		wantOffers  int
	}{
		{name: "price list element not json", body: edit(t, gpu, func(d map[string]any) { d["PriceList"].([]any)[0] = "{not json" }), wantKind: KindDecode},
		{name: "truncated page", body: gpu[:len(gpu)/2], wantKind: KindDecode},
		{name: "negative price", body: setProduct(setPrice("USD", "-21.9")), wantKind: KindInvalid},
		{name: "yuan", body: setProduct(setPrice("CNY", "150.0")), wantKind: KindInvalid},
		{name: "zero price skipped", body: setProduct(setPrice("USD", "0.0000000000")), wantOffers: 3},
		{name: "unknown gpu instance", body: setProduct(func(p map[string]any) {
			p["product"].(map[string]any)["attributes"].(map[string]any)["instanceType"] = "p9.96xlarge"
		}), wantOffers: 3, wantUnknown: "aws:p9.96xlarge"},
		{name: "gpu count disagrees with table", body: setProduct(func(p map[string]any) {
			p["product"].(map[string]any)["attributes"].(map[string]any)["gpu"] = "4"
		}), wantOffers: 3, wantUnknown: "aws:p4d.24xlarge (price list says 4 GPUs, table 8)"},
		{name: "throttled", body: []byte(`{"__type":"ThrottlingException","message":"Rate exceeded"}`), status: 400, wantKind: KindRateLimited},
		{name: "access denied", body: []byte(`{"__type":"AccessDeniedException","message":"no"}`), status: 403, wantKind: KindAuth},
		{name: "503", body: []byte(`{}`), status: 503, wantKind: KindServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.status == 0 {
				tt.status = 200
			}
			srv := newReplay(t, jsonReply(tt.body, tt.status))
			src, err := NewAWSOnDemand(context.Background(), awsOpts(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			cat, err := src.Fetch(context.Background(), at)
			if tt.wantKind != "" {
				wantKind(t, err, tt.wantKind)
				if strings.Contains(err.Error(), awsTestSecret) {
					t.Errorf("error leaks the secret key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cat.Offers) != tt.wantOffers {
				t.Errorf("offers = %d, want %d", len(cat.Offers), tt.wantOffers)
			}
			if tt.wantUnknown != "" && cat.Unknown[tt.wantUnknown] != 1 {
				t.Errorf("unknown = %v, want %q", cat.Unknown, tt.wantUnknown)
			}
		})
	}
}

func FuzzParseAWSProduct(f *testing.F) {
	var env struct{ PriceList []string }
	_ = json.Unmarshal(fixture(f, "aws-pricing-getproducts-gpu.json"), &env)
	for _, doc := range env.PriceList {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := parseAWSProduct(doc)
		if err != nil {
			return
		}
		var cat pricing.Catalog
		if normalizeProduct(p, "us-east-1", "fuzz", at, &cat) != nil {
			return
		}
		assertValid(t, cat)
	})
}

func FuzzNormalizeSpotPrice(f *testing.F) {
	f.Add("30.182400")
	f.Add("-1")
	f.Add("NaN")
	f.Fuzz(func(t *testing.T, price string) {
		var cat pricing.Catalog
		rows := []spotRow{{Zone: "us-east-1a", InstanceType: "p5.48xlarge", Product: "Linux/UNIX", Price: price, At: at}}
		if normalizeSpot(rows, "us-east-1", "fuzz", at, &cat) != nil {
			return
		}
		assertValid(t, cat)
	})
}
