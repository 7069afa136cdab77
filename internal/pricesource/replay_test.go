package pricesource

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// at is the observation time every test passes in.
var at = time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)

// sharedData is ../shared/data relative to the repository root.
func sharedData(t testing.TB, parts ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(append([]string{filepath.Dir(file), "..", "..", "..", "shared", "data"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared data %s not present (%v); it lives beside the repository in ../shared/data", p, err)
	}
	return p
}

// fixture reads a recorded response from ../shared/data/provider-formats/fixtures.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(sharedData(t, "provider-formats", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reply is one recorded HTTP response.
type reply struct {
	status  int
	header  map[string]string
	body    []byte
	match   func(*http.Request) bool // nil matches any request
	request func(*http.Request, []byte)
}

// replayServer answers each request with the first unused reply that matches it, and records
// what it received. A request nothing matches gets a 599 and fails the test.
type replayServer struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []reply
	used     []bool
	requests []*http.Request
	bodies   [][]byte
}

func newReplay(t *testing.T, replies ...reply) *replayServer {
	t.Helper()
	rs := &replayServer{replies: replies, used: make([]bool, len(replies))}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readAll(r)
		rs.mu.Lock()
		rs.requests = append(rs.requests, r)
		rs.bodies = append(rs.bodies, body)
		idx := -1
		for i, rep := range rs.replies {
			if !rs.used[i] && (rep.match == nil || rep.match(r)) {
				idx = i
				rs.used[i] = true
				break
			}
		}
		rs.mu.Unlock()
		if idx < 0 {
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			w.WriteHeader(599)
			return
		}
		rep := rs.replies[idx]
		if rep.request != nil {
			rep.request(r, body)
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if rep.status == 0 {
			rep.status = http.StatusOK
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write(rep.body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func readAll(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(b.String())
}

// edit decodes a JSON fixture, lets f change it, and encodes it again.
func edit(t *testing.T, body []byte, f func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	f(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantKind asserts err is an *Error of kind want.
func wantKind(t *testing.T, err error, want Kind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error of kind %s", err, err, want)
	}
	if e.Kind != want {
		t.Fatalf("error kind = %s, want %s (error: %v)", e.Kind, want, err)
	}
	return e
}

// failureReplies are the HTTP failures every HTTP source must turn into the right error kind.
var failureReplies = []struct {
	name           string
	reply          reply
	wantKind       Kind
	wantRetryAfter time.Duration
}{
	{name: "401", reply: reply{status: 401, body: []byte(`{"error":"unauthorized"}`)}, wantKind: KindAuth},
	{name: "403", reply: reply{status: 403, body: []byte(`forbidden`)}, wantKind: KindAuth},
	{name: "429 with Retry-After", reply: reply{status: 429, header: map[string]string{"Retry-After": "7"}}, wantKind: KindRateLimited, wantRetryAfter: 7 * time.Second},
	{name: "429 with date Retry-After", reply: reply{status: 429, header: map[string]string{
		"Date": "Sun, 13 Sep 2026 12:00:00 GMT", "Retry-After": "Sun, 13 Sep 2026 12:00:30 GMT"}},
		wantKind: KindRateLimited, wantRetryAfter: 30 * time.Second},
	{name: "500", reply: reply{status: 500, body: []byte(`boom`)}, wantKind: KindServer},
	{name: "503", reply: reply{status: 503}, wantKind: KindServer},
	{name: "malformed", reply: reply{body: []byte(`<html>not json</html>`)}, wantKind: KindDecode},
}
