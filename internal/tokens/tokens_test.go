package tokens

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// fakeServer serves a metrics page that a test can swap, fail or slow down.
type fakeServer struct {
	mu     sync.Mutex
	page   []byte
	status int
	delay  time.Duration
	hits   int
}

func newFakeServer(t *testing.T, page []byte) (*fakeServer, *httptest.Server) {
	f := &fakeServer{page: page}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		page, status, delay := f.page, f.status, f.delay
		f.hits++
		f.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if status != 0 {
			http.Error(w, "", status)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) set(fn func(f *fakeServer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeServer) hitCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// recorder is a Publisher that keeps samples and fails while a failure is set.
type recorder = eventstest.Publisher[*events.TokensSample]

// page is a vLLM page with the given totals.
func page(prompt, gen, reqs int) []byte {
	return []byte(strings.NewReplacer("P", strconv.Itoa(prompt), "G", strconv.Itoa(gen), "R", strconv.Itoa(reqs)).Replace(
		"# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"m\"} P\n" +
			"# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} G\n" +
			"# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} R\n"))
}

func newScraper(t *testing.T, pub Publisher, now time.Time, targets ...Target) *Scraper {
	t.Helper()
	s, err := New(Config{Timeout: 200 * time.Millisecond, Targets: targets},
		Deps{Publisher: pub, Now: func() time.Time { return now }, Metrics: NewMetrics(prometheus.NewRegistry())})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scrapes is the scraper's count of target 0's scrapes with outcome.
func scrapes(s *Scraper, outcome string) float64 {
	t := s.cfg.Targets[0]
	return testutil.ToFloat64(s.d.Metrics.scrapes.WithLabelValues(t.Workload, t.Replica, outcome))
}

func TestScrapeDetectsCounterResets(t *testing.T) {
	at := time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		pages     [][]byte
		wantReset []bool
	}{
		{name: "growing", pages: [][]byte{page(100, 10, 1), page(200, 20, 2), page(200, 20, 2)},
			wantReset: []bool{false, false, false}},
		{name: "server restarted", pages: [][]byte{page(100, 10, 1), page(5, 1, 0), page(50, 9, 1)},
			wantReset: []bool{false, true, false}},
		{name: "only requests went down", pages: [][]byte{page(100, 10, 3), page(100, 10, 2)},
			wantReset: []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeServer(t, nil)
			pub := &recorder{}
			s := newScraper(t, pub, at, Target{URL: srv.URL + "/metrics", Server: VLLM, Location: "l", Workload: "llm"})
			for _, p := range tt.pages {
				f.set(func(f *fakeServer) { f.page = p })
				if _, err := s.Scrape(context.Background(), 0); err != nil {
					t.Fatal(err)
				}
			}
			got := pub.Events()
			for i, e := range got {
				if e.Reset != tt.wantReset[i] {
					t.Errorf("sample %d reset = %v, want %v", i, e.Reset, tt.wantReset[i])
				}
				want, _ := Parse(strings.NewReader(string(tt.pages[i])), VLLM)
				if e.PromptTokens != want.PromptTokens || e.GenerationTokens != want.GenerationTokens || e.Requests != want.Requests {
					t.Errorf("sample %d = %+v, want counters %+v", i, e, want)
				}
			}
		})
	}
}

func TestScrapeKeepsTheResetWhenAPublishFails(t *testing.T) {
	f, srv := newFakeServer(t, page(100, 10, 1))
	pub := &recorder{}
	s := newScraper(t, pub, time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC),
		Target{URL: srv.URL, Server: VLLM, Location: "l", Workload: "llm"})
	if _, err := s.Scrape(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	f.set(func(f *fakeServer) { f.page = page(1, 1, 0) })
	pub.SetFail(errors.New("nats: timeout"))
	if _, err := s.Scrape(context.Background(), 0); err == nil {
		t.Fatal("Scrape() hid a failed publish")
	}
	pub.SetFail(nil)
	e, err := s.Scrape(context.Background(), 0)
	if err != nil || !e.Reset {
		t.Fatalf("Scrape() = %+v, %v; want the reset reported after the failed publish", e, err)
	}
	if ok, failed := scrapes(s, "ok"), scrapes(s, "publish_error"); ok != 2 || failed != 1 {
		t.Errorf("scrapes ok=%v publish_error=%v, want 2 and 1", ok, failed)
	}
	tg := s.cfg.Targets[0]
	if n := testutil.ToFloat64(s.d.Metrics.resets.WithLabelValues(tg.Workload, tg.Replica)); n != 1 {
		t.Errorf("bursar_tokens_counter_resets_total = %v, want 1 (counted once published)", n)
	}
	if at := testutil.ToFloat64(s.d.Metrics.lastSuccess.WithLabelValues(tg.Workload, tg.Replica)); at != float64(e.At.Unix()) {
		t.Errorf("last success = %v, want %v", at, e.At.Unix())
	}
}

func TestScrapeReportsABadEndpoint(t *testing.T) {
	tests := []struct {
		name    string
		break_  func(f *fakeServer)
		wantErr string
	}{
		{name: "5xx", break_: func(f *fakeServer) { f.status = http.StatusServiceUnavailable }, wantErr: "HTTP 503"},
		{name: "timeout", break_: func(f *fakeServer) { f.delay = 2 * time.Second }, wantErr: "deadline exceeded"},
		{name: "malformed", break_: func(f *fakeServer) { f.page = []byte("vllm:prompt_tokens_total{ 12\n") }, wantErr: "parsing vllm metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeServer(t, page(1, 1, 1))
			pub := &recorder{}
			u := strings.Replace(srv.URL, "http://", "http://scraper:hunter2@", 1) + "/metrics?token=t0ken"
			s := newScraper(t, pub, time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC),
				Target{URL: u, Server: VLLM, Location: "l", Workload: "llm", Replica: "r1"})
			f.set(tt.break_)
			_, err := s.Scrape(context.Background(), 0)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Scrape() = %v, want an error containing %q", err, tt.wantErr)
			}
			for _, secret := range []string{"scraper", "hunter2", "t0ken"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error leaks %q: %v", secret, err)
				}
			}
			if len(pub.Events()) != 0 {
				t.Fatal("published a sample from a bad endpoint")
			}
			if bad, ok := scrapes(s, "error"), scrapes(s, "ok"); bad != 1 || ok != 0 {
				t.Errorf("scrapes error=%v ok=%v, want 1 and 0", bad, ok)
			}
		})
	}
}

func TestRunScrapesEveryTargetUntilCancelled(t *testing.T) {
	fv, v := newFakeServer(t, fixture(t, "vllm-metrics.txt"))
	fg, g := newFakeServer(t, fixture(t, "tgi-metrics.txt"))
	pub := &recorder{}
	s, err := New(Config{Interval: 5 * time.Millisecond, Targets: []Target{
		{URL: v.URL, Server: VLLM, Location: "l", Workload: "llm"},
		{URL: g.URL, Server: TGI, Location: "l", Workload: "llm"}}}, Deps{Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	for fv.hitCount() < 3 || fg.hitCount() < 3 {
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	servers := map[string]bool{}
	for _, e := range pub.Events() {
		servers[e.Server] = true
	}
	if !servers["vllm"] || !servers["tgi"] {
		t.Fatalf("published samples from %v, want both servers", servers)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantField string
	}{
		{name: "ok", yaml: `{interval: 15s, targets: [{url: "http://10.0.0.1:8000/metrics", server: vllm, location: l, workload: w}]}`},
		{name: "bad server", yaml: `{targets: [{url: "http://h/metrics", server: triton, location: l, workload: w}]}`,
			wantField: "targets[0].server"},
		{name: "bad url", yaml: `{targets: [{url: "h:8000", server: tgi, location: l, workload: w}]}`, wantField: "targets[0].url"},
		{name: "no workload", yaml: `{targets: [{url: "http://h/m", server: tgi, location: l}]}`, wantField: "targets[0].workload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			if err := yaml.Unmarshal([]byte(tt.yaml), &c); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			var fe *FieldError
			if tt.wantField == "" && err != nil || tt.wantField != "" && (!errors.As(err, &fe) || fe.Field != tt.wantField) {
				t.Fatalf("Validate() = %v, want field %q", err, tt.wantField)
			}
		})
	}
}

func TestARoundPublishesTheTargetsThatAnswered(t *testing.T) {
	_, ok := newFakeServer(t, page(100, 10, 1))
	down, bad := newFakeServer(t, page(1, 1, 1))
	down.set(func(f *fakeServer) { f.status = http.StatusServiceUnavailable })
	pub := &recorder{}
	s := newScraper(t, pub, time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC),
		Target{URL: ok.URL, Server: VLLM, Location: "l", Workload: "llm", Replica: "up"},
		Target{URL: bad.URL, Server: VLLM, Location: "l", Workload: "llm", Replica: "down"})
	got, err := s.round(context.Background(), []int{0, 1})
	if err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("round() error = %v, want the down target's HTTP 503", err)
	}
	if len(got) != 1 || got[0].Replica != "up" || len(pub.Events()) != 1 || pub.Events()[0].Replica != "up" {
		t.Fatalf("round() published %+v, want the sample of the target that answered", pub.Events())
	}
}
