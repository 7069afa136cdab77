package pricesource

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The tests in this file replay a provider's bad day: a server that never answers, stalls or
// drips, pages in a cycle, answers 200 with the wrong body, or sends too much.

const gcpFaultKey = "AIzaFAULTTESTKEY0123456789"

// httpSource is one HTTP source under test: how to build it against an endpoint, and the
// recorded body and content type of a good last page.
type httpSource struct {
	name        string
	build       func(t *testing.T, endpoint string, lim Limits) fetcher
	body        func(t *testing.T) []byte
	contentType string
}

func httpSources() []httpSource {
	return []httpSource{
		{name: "aws-spot", contentType: "text/xml;charset=UTF-8",
			body: func(t *testing.T) []byte { return fixture(t, "aws-describe-spot-price-history.xml") },
			build: func(t *testing.T, endpoint string, lim Limits) fetcher {
				o := awsOpts(endpoint)
				o.Limits = lim
				src, err := NewAWSSpot(context.Background(), o, nil)
				if err != nil {
					t.Fatal(err)
				}
				return src
			}},
		{name: "aws-ondemand", contentType: "application/x-amz-json-1.1",
			body: func(t *testing.T) []byte { return fixture(t, "aws-pricing-getproducts-gpu.json") },
			build: func(t *testing.T, endpoint string, lim Limits) fetcher {
				o := awsOpts(endpoint)
				o.Limits = lim
				src, err := NewAWSOnDemand(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				return src
			}},
		{name: "azure", contentType: "application/json",
			body: func(t *testing.T) []byte { return fixture(t, "azure-retail-prices-gpu-page2.json") },
			build: func(_ *testing.T, endpoint string, lim Limits) fetcher {
				return &AzureRetail{Region: "eastus", Endpoint: endpoint, Limits: lim}
			}},
		{name: "gcp", contentType: "application/json",
			body: func(t *testing.T) []byte { return fixture(t, "gcp-billing-skus-gpu-page2.json") },
			build: func(_ *testing.T, endpoint string, lim Limits) fetcher {
				return &GCPBilling{APIKey: gcpFaultKey, Endpoint: endpoint, Limits: lim}
			}},
	}
}

// faultServer serves every request with fault, which must return once the client is gone. The
// request body is read first: until it is, net/http does not notice the client hang up.
func faultServer(t *testing.T, fault func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fault(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// hang accepts the request and never answers.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// stallAfter sends the headers and the first third of body, then nothing.
func stallAfter(body []byte, contentType string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/3])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// drip sends body one byte at a time, each well within any idle timeout, then nothing.
func drip(body []byte, contentType string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		for i := range body {
			_, _ = w.Write(body[i : i+1])
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
		<-r.Context().Done()
	}
}

// TestHTTPSourcesEndWhenTheProviderStalls: a provider that never answers, stalls mid-body or
// drips a byte at a time ends the fetch with a timeout naming the source and the endpoint,
// never the key, instead of holding it forever.
func TestHTTPSourcesEndWhenTheProviderStalls(t *testing.T) {
	tests := []struct {
		name     string
		fault    func(body []byte, contentType string) func(http.ResponseWriter, *http.Request)
		limits   Limits
		deadline time.Duration // of the whole fetch; 0: none
		want     string
		wantIs   error
	}{
		{name: "no response headers", fault: func([]byte, string) func(http.ResponseWriter, *http.Request) { return hang },
			limits: Limits{HeaderTimeout: 50 * time.Millisecond}, want: "no response headers within 50ms"},
		{name: "body stalls", fault: stallAfter,
			limits: Limits{IdleTimeout: 50 * time.Millisecond}, want: "no body data within 50ms"},
		{name: "body drips past the fetch deadline", fault: drip,
			limits: Limits{IdleTimeout: time.Minute}, deadline: 300 * time.Millisecond, wantIs: context.DeadlineExceeded},
	}
	for _, src := range httpSources() {
		for _, tt := range tests {
			t.Run(src.name+"/"+tt.name, func(t *testing.T) {
				srv := faultServer(t, tt.fault(src.body(t), src.contentType))
				ctx := context.Background()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				_, err := src.build(t, srv.URL, tt.limits).Fetch(ctx, at)
				e := wantKind(t, err, KindTimeout)
				if !e.Retryable() {
					t.Errorf("a timeout is not retryable: %v", err)
				}
				msg := err.Error()
				if !strings.Contains(msg, e.Source) || !strings.Contains(msg, strings.TrimPrefix(srv.URL, "http://")) {
					t.Errorf("error %q does not name the source and endpoint %s", msg, srv.URL)
				}
				if tt.want != "" && !strings.Contains(msg, tt.want) {
					t.Errorf("error %q does not say %q", msg, tt.want)
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("error %v is not %v", err, tt.wantIs)
				}
				if strings.Contains(msg, gcpFaultKey) {
					t.Errorf("error leaks the API key: %s", msg)
				}
			})
		}
	}
}

// TestHTTPSourcesCapTheBody: a body over the source's cap fails the fetch as too large.
func TestHTTPSourcesCapTheBody(t *testing.T) {
	for _, src := range httpSources() {
		t.Run(src.name, func(t *testing.T) {
			srv := newReplay(t, reply{body: src.body(t), header: map[string]string{"Content-Type": src.contentType}})
			cat, err := src.build(t, srv.URL, Limits{MaxBody: 512}).Fetch(context.Background(), at)
			wantKind(t, err, KindTooLarge)
			if !strings.Contains(err.Error(), "larger than 512 bytes") || len(cat.Offers) != 0 {
				t.Errorf("error %q (offers %d), want one naming the 512-byte cap and no offers", err, len(cat.Offers))
			}
		})
	}
}
