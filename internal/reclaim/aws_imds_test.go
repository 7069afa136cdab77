package reclaim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/events"
)

// fakeIMDS behaves like the EC2 instance metadata service with IMDSv2 enforced: a token from
// PUT /latest/api/token is required on every GET, and the spot paths answer 404 when idle.
type fakeIMDS struct {
	mu        sync.Mutex
	action    []byte // nil: 404
	rebalance []byte // nil: 404
	status    int    // when set, every GET answers this status
	putStatus int    // when set, the token PUT answers this status
	noTTL     bool   // the token answer lacks its TTL header, as a metadata proxy's may
	delay     time.Duration
	tokens    map[string]bool
	issued    int
	gets      int
}

const identityDoc = `{"accountId":"123456789012","availabilityZone":"us-east-1a","instanceId":"i-0b662ef9931388ba0",
"instanceType":"p5.48xlarge","privateIp":"10.0.0.12","region":"us-east-1"}`

func newFakeIMDS(t *testing.T) (*fakeIMDS, *httptest.Server) {
	f := &fakeIMDS{tokens: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeIMDS) set(fn func(f *fakeIMDS)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeIMDS) getCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets
}

func (f *fakeIMDS) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if r.Method == http.MethodPut && r.URL.Path == "/latest/api/token" {
		defer f.mu.Unlock()
		if f.putStatus != 0 {
			http.Error(w, "", f.putStatus)
			return
		}
		if r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") == "" {
			http.Error(w, "missing ttl", http.StatusBadRequest)
			return
		}
		f.issued++
		tok := fmt.Sprintf("AQAEAtoken%d==", f.issued)
		f.tokens[tok] = true
		if !f.noTTL {
			w.Header().Set("X-aws-ec2-metadata-token-ttl-seconds", r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds"))
		}
		fmt.Fprint(w, tok)
		return
	}
	f.gets++
	action, rebalance, status, delay := f.action, f.rebalance, f.status, f.delay
	valid := f.tokens[r.Header.Get("X-aws-ec2-metadata-token")]
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "", http.StatusMethodNotAllowed)
	case !valid:
		http.Error(w, "", http.StatusUnauthorized)
	case status != 0:
		http.Error(w, "", status)
	case r.URL.Path == "/latest/dynamic/instance-identity/document":
		fmt.Fprint(w, identityDoc)
	case r.URL.Path == "/latest/meta-data/"+imdsActionPath && action != nil:
		w.Write(action)
	case r.URL.Path == "/latest/meta-data/"+imdsRebalancePath && rebalance != nil:
		w.Write(rebalance)
	default:
		http.NotFound(w, r)
	}
}

func newIMDSWatcher(srv *httptest.Server, pub Publisher, clk *clock) *AWSIMDSWatcher {
	return NewAWSIMDSWatcher(AWSIMDSConfig{NodeConfig: NodeConfig{Location: "aws-use1", Node: "gpu-node-1"},
		Endpoint: srv.URL, Timeout: 200 * time.Millisecond}, Deps{Publisher: pub, Now: clk.Now, Metrics: NewMetrics(prometheus.NewRegistry())})
}

func TestAWSIMDSPublishesEachNoticeOnce(t *testing.T) {
	start := mustTime(t, "2026-09-13T11:58:03Z")
	tests := []struct {
		name         string
		action       []byte
		rebalance    []byte
		wantKind     []events.ReclaimKind
		wantNotice   []time.Time
		wantDeadline []time.Time
	}{
		{name: "idle: 404 on both paths"},
		{name: "spot interruption", action: fixture(t, "aws-imds-spot-instance-action.json"),
			wantKind:     []events.ReclaimKind{events.ReclaimInterruption},
			wantNotice:   []time.Time{start}, // IMDS gives no notice time: first seen
			wantDeadline: []time.Time{mustTime(t, "2026-09-13T12:00:00Z")}},
		{name: "rebalance recommendation", rebalance: fixture(t, "aws-imds-rebalance.json"),
			wantKind:     []events.ReclaimKind{events.ReclaimRebalance},
			wantNotice:   []time.Time{mustTime(t, "2026-09-13T11:40:00Z")},
			wantDeadline: []time.Time{mustTime(t, "2026-09-13T11:42:00Z")}},
		{name: "both", action: fixture(t, "aws-imds-spot-instance-action.json"),
			rebalance:    fixture(t, "aws-imds-rebalance.json"),
			wantKind:     []events.ReclaimKind{events.ReclaimInterruption, events.ReclaimRebalance},
			wantNotice:   []time.Time{start, mustTime(t, "2026-09-13T11:40:00Z")},
			wantDeadline: []time.Time{mustTime(t, "2026-09-13T12:00:00Z"), mustTime(t, "2026-09-13T11:42:00Z")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeIMDS(t)
			f.set(func(f *fakeIMDS) { f.action, f.rebalance = tt.action, tt.rebalance })
			pub, clk := newRecorder(), newClock(start)
			w := newIMDSWatcher(srv, pub, clk)
			for range 5 {
				if err := w.Poll(context.Background()); err != nil {
					t.Fatal(err)
				}
				clk.step(5 * time.Second)
			}
			got := pub.reclaims()
			if len(got) != len(tt.wantKind) {
				t.Fatalf("published %d notices, want %d", len(got), len(tt.wantKind))
			}
			for i, e := range got {
				if n := testutil.ToFloat64(w.d.Metrics.published.WithLabelValues(e.Provider, string(e.Kind))); n != 1 {
					t.Errorf("bursar_reclaim_notices_published_total{%s,%s} = %v over 5 polls, want 1", e.Provider, e.Kind, n)
				}
				if e.Kind != tt.wantKind[i] || !e.NoticeAt.Equal(tt.wantNotice[i]) || !e.Deadline.Equal(tt.wantDeadline[i]) {
					t.Errorf("notice %d = %s at %s due %s, want %s at %s due %s", i, e.Kind, e.NoticeAt,
						e.Deadline, tt.wantKind[i], tt.wantNotice[i], tt.wantDeadline[i])
				}
				if e.Instance != "i-0b662ef9931388ba0" || e.Region != "us-east-1" || e.Zone != "us-east-1a" ||
					e.Location != "aws-use1" || e.Node != "gpu-node-1" || !e.At.Equal(e.NoticeAt) {
					t.Errorf("notice %d placed wrong: %+v", i, e)
				}
			}
			if f.issued != 1 {
				t.Errorf("issued %d session tokens over 5 polls, want 1 (reused until expiry)", f.issued)
			}
		})
	}
}

func TestAWSIMDSSurvivesAFlakyService(t *testing.T) {
	action := fixture(t, "aws-imds-spot-instance-action.json")
	tests := []struct {
		name    string
		break_  func(f *fakeIMDS)
		wantErr string
	}{
		{name: "5xx", break_: func(f *fakeIMDS) { f.status = http.StatusServiceUnavailable }, wantErr: "HTTP 503"},
		{name: "timeout", break_: func(f *fakeIMDS) { f.delay = 2 * time.Second }, wantErr: "deadline exceeded"},
		{name: "malformed body", break_: func(f *fakeIMDS) { f.action = []byte(`{"action": "terminate", "time": "soon"}`) },
			wantErr: "spot/instance-action"},
		{name: "truncated body", break_: func(f *fakeIMDS) { f.action = []byte(`{"action": "termin`) },
			wantErr: "spot/instance-action"},
		{name: "tokens revoked", break_: func(f *fakeIMDS) { clear(f.tokens) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeIMDS(t)
			pub, clk := newRecorder(), newClock(mustTime(t, "2026-09-13T11:58:03Z"))
			w := newIMDSWatcher(srv, pub, clk)
			if err := w.Poll(context.Background()); err != nil { // discovers while healthy
				t.Fatal(err)
			}
			f.set(func(f *fakeIMDS) { f.action = action; tt.break_(f) })
			err := w.Poll(context.Background())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Poll() error = %v, want one containing %q", err, tt.wantErr)
			}
			if n := len(pub.reclaims()); tt.wantErr != "" && n != 0 {
				t.Fatalf("published %d notices from a broken service", n)
			}
			f.set(func(f *fakeIMDS) { f.action, f.status, f.delay = action, 0, 0 })
			if err := w.Poll(context.Background()); err != nil {
				t.Fatalf("after recovery: %v", err)
			}
			if got := pub.reclaims(); len(got) != 1 || !got[0].Deadline.Equal(mustTime(t, "2026-09-13T12:00:00Z")) {
				t.Fatalf("after recovery published %+v, want one notice due 12:00", got)
			}
		})
	}
}

func TestAWSIMDSRetriesAFailedPublishWithTheSameID(t *testing.T) {
	f, srv := newFakeIMDS(t)
	f.set(func(f *fakeIMDS) { f.action = fixture(t, "aws-imds-spot-instance-action.json") })
	pub, clk := newRecorder(), newClock(mustTime(t, "2026-09-13T11:58:03Z"))
	w := newIMDSWatcher(srv, pub, clk)
	pub.setFail(errors.New("nats: no responders"))
	if err := w.Poll(context.Background()); err == nil {
		t.Fatal("Poll() hid a failed publish")
	}
	pub.setFail(nil)
	clk.step(5 * time.Second)
	if err := w.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := pub.reclaims()
	if len(got) != 1 {
		t.Fatalf("published %d notices, want 1", len(got))
	}
	if want := mustTime(t, "2026-09-13T11:58:03Z"); !got[0].NoticeAt.Equal(want) {
		t.Errorf("notice time %s, want the first sighting %s (so the id is stable)", got[0].NoticeAt, want)
	}
}

func TestAWSIMDSRunStopsOnCancel(t *testing.T) {
	f, srv := newFakeIMDS(t)
	f.set(func(f *fakeIMDS) { f.action = fixture(t, "aws-imds-spot-instance-action.json") })
	pub := newRecorder()
	w := NewAWSIMDSWatcher(AWSIMDSConfig{NodeConfig: NodeConfig{Location: "aws-use1"}, Endpoint: srv.URL,
		Interval: 10 * time.Millisecond}, Deps{Publisher: pub})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	pub.waitFor(t, 1)
	for f.getCount() < 8 { // let it poll a few more times
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run() = %v, want nil on cancel", err)
	}
	if n := len(pub.reclaims()); n != 1 {
		t.Fatalf("published %d notices over many polls, want 1", n)
	}
}

// TestAWSIMDSNeverFallsBackToIMDSv1: when the token PUT fails (IMDS answers 403 when tokens are
// turned off; a proxy may answer 404 or 405), a poll fails naming the token, and no tokenless
// IMDSv1 request is made, which the SDK would otherwise fall back to.
func TestAWSIMDSNeverFallsBackToIMDSv1(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f, srv := newFakeIMDS(t)
			f.set(func(f *fakeIMDS) { f.putStatus = status })
			w := newIMDSWatcher(srv, newRecorder(), newClock(mustTime(t, "2026-09-13T11:58:03Z")))
			for range 2 {
				err := w.Poll(context.Background())
				if err == nil || !strings.Contains(err.Error(), "token") {
					t.Fatalf("Poll() error = %v, want one naming the session token", err)
				}
			}
			if n := f.getCount(); n != 0 {
				t.Errorf("%d tokenless GETs made after the token PUT failed, want none", n)
			}
		})
	}
}

// TestAWSIMDSTokenWithoutTTLHeader: a token answer without the TTL header (a proxy's) is still
// used, for the TTL asked for.
func TestAWSIMDSTokenWithoutTTLHeader(t *testing.T) {
	f, srv := newFakeIMDS(t)
	f.set(func(f *fakeIMDS) { f.noTTL, f.action = true, fixture(t, "aws-imds-spot-instance-action.json") })
	pub := newRecorder()
	w := newIMDSWatcher(srv, pub, newClock(mustTime(t, "2026-09-13T11:58:03Z")))
	for range 3 {
		if err := w.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(pub.reclaims()); n != 1 || f.issued != 1 {
		t.Fatalf("published %d notices with %d tokens, want 1 with 1", n, f.issued)
	}
}
