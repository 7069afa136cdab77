package collect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/pricesource"
)

// azureFixture reads a recorded Azure Retail Prices page from ../shared/data.
func azureFixture(t *testing.T) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "provider-formats", "fixtures", "azure-retail-prices-gpu-page2.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Skipf("recorded page %s not present: %v", p, err)
	}
	return b
}

// scriptedProvider is a local Azure Retail Prices server answering each request with the next
// body in turn, the last one for ever.
func scriptedProvider(t *testing.T, bodies ...[]byte) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := bodies[0]
		if len(bodies) > 1 {
			bodies = bodies[1:]
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBadAnswerKeepsLastGoodCatalog: after a good catalog, a 200 with no offers or with the
// wrong body is a failed run: the last good catalog stays, nothing is published, the failure
// is counted by kind and the source goes stale (the state the arbiter's stale alert sees).
func TestBadAnswerKeepsLastGoodCatalog(t *testing.T) {
	tests := []struct {
		name     string
		bad      string
		wantKind string
	}{
		{name: "no offers", bad: `{"BillingCurrency":"USD","Items":[],"NextPageLink":null,"Count":0}`, wantKind: "empty"},
		{name: "html page", bad: `<!DOCTYPE html><html><body>Service Unavailable</body></html>`, wantKind: "decode"},
		{name: "error document", bad: `{"error":{"code":"InternalError"}}`, wantKind: "decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := bustest.Start(t)
			srv := scriptedProvider(t, azureFixture(t), []byte(tt.bad))
			reg := prometheus.NewRegistry()
			c := New(bus.NewPublisher(env.JS), quiet(), NewMetrics(reg))
			src := &pricesource.AzureRetail{Region: "eastus", Endpoint: srv.URL}
			job := Job{Source: src, StaleAfter: 2}
			ctx := context.Background()
			n, err := c.RunOnce(ctx, job, t0, true)
			if err != nil || n == 0 {
				t.Fatalf("good run: published %d, err %v", n, err)
			}
			for i, wantStale := range []bool{false, true} {
				_, err = c.RunOnce(ctx, job, t0.Add(time.Duration(i+1)*time.Minute), true)
				if err == nil {
					t.Fatalf("bad answer %d did not fail the run", i+1)
				}
				if c.Stale(src.Name()) != wantStale {
					t.Errorf("after %d bad answers stale = %v, want %v", i+1, !wantStale, wantStale)
				}
			}
			var empty *EmptyError
			if tt.wantKind == "empty" && (!errors.As(err, &empty) || !strings.Contains(err.Error(), "no offers")) {
				t.Errorf("error %v does not say the source answered with no offers", err)
			}
			cat, ok := c.Catalog(src.Name())
			if !ok || len(cat.Offers) != n || marketEvents(t, env.JS) != uint64(n) {
				t.Errorf("catalog has %d offers (kept %v), stream %d; want the last good %d and nothing new",
					len(cat.Offers), ok, marketEvents(t, env.JS), n)
			}
			if got := testutil.ToFloat64(c.metrics.errors.WithLabelValues(src.Name(), tt.wantKind)); got != 2 {
				t.Errorf("%s errors = %v, want 2", tt.wantKind, got)
			}
			if got := testutil.ToFloat64(c.metrics.stale.WithLabelValues(src.Name())); got != 1 {
				t.Errorf("stale metric = %v, want 1", got)
			}
		})
	}
}

// hangingProvider accepts requests and never answers, until the client goes away.
func hangingProvider(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRunTimesOutAHangingSource: a provider that never answers fails the run once the job's
// timeout passes, with an error naming the source, its endpoint and the limit that ran out.
func TestRunTimesOutAHangingSource(t *testing.T) {
	srv := hangingProvider(t)
	reg := prometheus.NewRegistry()
	c := New(nil, quiet(), NewMetrics(reg))
	src := &pricesource.AzureRetail{Region: "eastus", Endpoint: srv.URL}
	_, err := c.RunOnce(context.Background(), Job{Source: src, Timeout: 100 * time.Millisecond}, t0, true)
	if err == nil {
		t.Fatal("a hanging provider did not fail the run")
	}
	for _, want := range []string{src.Name(), srv.URL, "100ms", `"timeout:"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if got := testutil.ToFloat64(c.metrics.errors.WithLabelValues(src.Name(), "timeout")); got != 1 {
		t.Errorf("timeout errors = %v, want 1", got)
	}
}

// TestPricesFaults: `collector prices` ends against a hanging provider within --timeout, and
// fails, rather than printing an empty table, when the source answers with no offers.
func TestPricesFaults(t *testing.T) {
	tests := []struct {
		name string
		srv  func(t *testing.T) *httptest.Server
		want []string
	}{
		{name: "hanging provider", srv: hangingProvider, want: []string{"azure-retail:eastus", "timeout", "150ms", "--timeout"}},
		{name: "no offers", srv: func(t *testing.T) *httptest.Server {
			return scriptedProvider(t, []byte(`{"BillingCurrency":"USD","Items":[],"NextPageLink":null,"Count":0}`))
		}, want: []string{"azure-retail:eastus", "no offers", "--region"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tt.srv(t)
			var out, errOut bytes.Buffer
			o := PricesOptions{Source: "azure", Region: "eastus", Endpoint: srv.URL, Output: "json", Timeout: 150 * time.Millisecond}
			err := Prices(context.Background(), o, t0, &out, &errOut)
			if err == nil {
				t.Fatalf("prices succeeded; stdout %q", out.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if out.Len() != 0 {
				t.Errorf("a failed fetch printed offers: %q", out.String())
			}
		})
	}
}
