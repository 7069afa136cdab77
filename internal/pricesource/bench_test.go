package pricesource

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// benchBodyMB is the size of the GetProducts page the benchmarks serve, the one in issue 13.
const benchBodyMB = 200

// priceListServer serves a GetProducts page of about mb megabytes: the recorded p5 product,
// moved to another region so that it is decoded and then skipped, repeated. The body is
// written as it is generated, so the server holds no copy of it.
func priceListServer(b *testing.B, mb int) (*httptest.Server, int64) {
	b.Helper()
	var env struct{ PriceList []string }
	if err := json.Unmarshal(fixture(b, "aws-pricing-getproducts-gpu.json"), &env); err != nil {
		b.Fatal(err)
	}
	doc := strings.Replace(env.PriceList[0], `"regionCode":"us-east-1"`, `"regionCode":"us-west-2"`, 1)
	item, _ := json.Marshal(doc)
	n := mb << 20 / (len(item) + 1)
	size := int64(len(`{"FormatVersion":"aws_v1","PriceList":[]}`) + n*(len(item)+1) - 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		bw := bufio.NewWriterSize(w, 64<<10)
		_, _ = bw.WriteString(`{"FormatVersion":"aws_v1","PriceList":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			if _, err := bw.Write(item); err != nil {
				return
			}
		}
		_, _ = bw.WriteString(`]}`)
		_ = bw.Flush()
	}))
	b.Cleanup(srv.Close)
	return srv, size
}

// peakOf runs f under peakHeap (skypilot_bench_test.go) and returns the peak.
func peakOf(f func()) uint64 {
	stop := peakHeap()
	f()
	return stop()
}

// BenchmarkAWSPriceListBody measures the peak heap of reading a 200 MB GetProducts page: the
// streaming decoder (with the cap raised above the body, and with the default 64 MiB cap,
// which fails it) beside ReadAll + Unmarshal of the same body, which is what the SDK did.
func BenchmarkAWSPriceListBody(b *testing.B) {
	srv, size := priceListServer(b, benchBodyMB)
	report := func(b *testing.B, peak uint64) {
		b.ReportMetric(float64(size)/1e6, "body-MB")
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	}
	fetch := func(b *testing.B, lim Limits, wantKind Kind) {
		o := awsOpts(srv.URL)
		o.Limits = lim
		src, err := NewAWSOnDemand(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakOf(func() {
				_, err = src.Fetch(context.Background(), at)
			}))
			if KindOf(err) != wantKind && (wantKind != "" || err != nil) {
				b.Fatalf("fetch: %v, want kind %q", err, wantKind)
			}
		}
		report(b, peak)
	}
	b.Run("stream", func(b *testing.B) { fetch(b, Limits{MaxBody: 2 * size}, "") })
	b.Run("stream-default-cap", func(b *testing.B) { fetch(b, Limits{}, KindTooLarge) })
	b.Run("baseline-readall-unmarshal", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakOf(func() {
				resp, err := http.Post(srv.URL, "application/x-amz-json-1.1", strings.NewReader("{}"))
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					b.Fatal(err)
				}
				var page struct{ PriceList []string }
				if err := json.Unmarshal(body, &page); err != nil {
					b.Fatal(err)
				}
				for _, doc := range page.PriceList {
					if _, err := parseAWSProduct([]byte(doc)); err != nil {
						b.Fatal(err)
					}
				}
			}))
		}
		report(b, peak)
	})
}
