package reclaim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// fakeGCPMetadata behaves like the GCP metadata server: it wants Metadata-Flavor: Google (403
// without), answers with the same header and an ETag, and holds a wait_for_change request whose
// last_etag is current until the value changes or timeout_sec passes.
type fakeGCPMetadata struct {
	mu      sync.Mutex
	values  map[string]string
	changed chan struct{} // closed and replaced on every change
	status  int
	delay   time.Duration
	flavor  bool
	waits   int
}

func newFakeGCP(t *testing.T) (*fakeGCPMetadata, *httptest.Server) {
	f := &fakeGCPMetadata{changed: make(chan struct{}), flavor: true, values: map[string]string{
		"instance/id":                "4914541434389210442",
		"instance/zone":              "projects/123456789012/zones/us-central1-a",
		"instance/preempted":         string(fixture(t, "gcp-metadata-preempted-false.txt")),
		"instance/maintenance-event": string(fixture(t, "gcp-metadata-maintenance-event-none.txt")),
	}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeGCPMetadata) set(fn func(f *fakeGCPMetadata)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
	close(f.changed)
	f.changed = make(chan struct{})
}

func etagOf(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:8])
}

func (f *fakeGCPMetadata) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Metadata-Flavor") != "Google" {
		http.Error(w, "Missing Metadata-Flavor:Google header.", http.StatusForbidden)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/computeMetadata/v1/")
	q := r.URL.Query()
	for {
		f.mu.Lock()
		v, ok := f.values[path]
		status, delay, flavor, changed := f.status, f.delay, f.flavor, f.changed
		waiting := q.Get("wait_for_change") == "true" && q.Get("last_etag") == etagOf(v)
		if waiting {
			f.waits++
		}
		f.mu.Unlock()
		if waiting {
			timeout, _ := strconv.Atoi(q.Get("timeout_sec"))
			select {
			case <-changed:
				continue
			case <-time.After(time.Duration(timeout) * time.Second):
			case <-r.Context().Done():
				return
			}
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if flavor {
			w.Header().Set("Metadata-Flavor", "Google")
		}
		switch {
		case status != 0:
			http.Error(w, "", status)
		case !ok:
			http.NotFound(w, r)
		default:
			w.Header().Set("ETag", etagOf(v))
			fmt.Fprint(w, v)
		}
		return
	}
}

func (f *fakeGCPMetadata) waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waits
}

func newGCPWatcher(srv *httptest.Server, pub Publisher, clk *clock) *GCPWatcher {
	return NewGCPWatcher(GCPMetadataConfig{NodeConfig: NodeConfig{Location: "gcp-usc1"},
		Endpoint: srv.URL + "/computeMetadata/v1", WaitTime: 2 * time.Second, RetryDelay: 10 * time.Millisecond},
		Deps{Publisher: pub, Now: clk.Now})
}

func TestGCPObservePublishesOncePerEpisode(t *testing.T) {
	start := mustTime(t, "2026-09-13T11:59:30Z")
	tests := []struct {
		name         string
		path         string
		values       []string // successive values the server holds
		wantNotices  int
		wantKind     events.ReclaimKind
		wantDeadline time.Time // of the first notice
	}{
		{name: "preempted stays false", path: "instance/preempted", values: []string{"FALSE", "FALSE"}},
		{name: "preempted turns true and stays", path: "instance/preempted",
			values: []string{"FALSE", string(fixture(t, "gcp-metadata-preempted-true.txt")), "TRUE", "TRUE"},
			// first seen on the second read, 10 s after start; Spot VMs get 30 s
			wantNotices: 1, wantKind: events.ReclaimPreempted, wantDeadline: start.Add(40 * time.Second)},
		{name: "host maintenance terminates the GPU VM", path: "instance/maintenance-event",
			values:      []string{string(fixture(t, "gcp-metadata-maintenance-event-terminate.txt")), "TERMINATE_ON_HOST_MAINTENANCE"},
			wantNotices: 1, wantKind: events.ReclaimMaintenance, wantDeadline: start.Add(60 * time.Second)},
		{name: "live migration is not a reclaim", path: "instance/maintenance-event",
			values: []string{"MIGRATE_ON_HOST_MAINTENANCE", "NONE"}},
		{name: "two maintenance episodes are two notices", path: "instance/maintenance-event",
			values:      []string{"TERMINATE_ON_HOST_MAINTENANCE", "NONE", "TERMINATE_ON_HOST_MAINTENANCE"},
			wantNotices: 2, wantKind: events.ReclaimMaintenance, wantDeadline: start.Add(60 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeGCP(t)
			pub, clk := newRecorder(), newClock(start)
			w := newGCPWatcher(srv, pub, clk)
			for _, v := range tt.values {
				f.set(func(f *fakeGCPMetadata) { f.values[tt.path] = v })
				if _, err := w.Observe(context.Background(), tt.path, ""); err != nil {
					t.Fatal(err)
				}
				clk.step(10 * time.Second)
			}
			got := pub.reclaims()
			if len(got) != tt.wantNotices {
				t.Fatalf("published %d notices, want %d", len(got), tt.wantNotices)
			}
			if len(got) == 0 {
				return
			}
			e := got[0]
			if e.Kind != tt.wantKind || !e.Deadline.Equal(tt.wantDeadline) || e.Instance != "4914541434389210442" ||
				e.Region != "us-central1" || e.Zone != "us-central1-a" || e.Provider != "gcp" {
				t.Errorf("notice = %+v, want %s due %s", e, tt.wantKind, tt.wantDeadline)
			}
		})
	}
}

func TestGCPObserveRejectsABadServer(t *testing.T) {
	tests := []struct {
		name    string
		break_  func(f *fakeGCPMetadata)
		wantErr string
	}{
		{name: "5xx", break_: func(f *fakeGCPMetadata) { f.status = http.StatusInternalServerError }, wantErr: "HTTP 500"},
		{name: "timeout", break_: func(f *fakeGCPMetadata) { f.delay = 30 * time.Second }, wantErr: "deadline exceeded"},
		{name: "malformed value", break_: func(f *fakeGCPMetadata) { f.values["instance/preempted"] = "<html>login</html>" },
			wantErr: "unexpected value"},
		{name: "not a metadata server", break_: func(f *fakeGCPMetadata) { f.flavor = false }, wantErr: "Metadata-Flavor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeGCP(t)
			pub := newRecorder()
			w := newGCPWatcher(srv, pub, newClock(mustTime(t, "2026-09-13T11:59:30Z")))
			if _, err := w.Observe(context.Background(), "instance/preempted", ""); err != nil {
				t.Fatal(err) // discovery happens while healthy
			}
			f.set(tt.break_)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := w.Observe(ctx, "instance/preempted", "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Observe() = %v, want an error containing %q", err, tt.wantErr)
			}
			if len(pub.reclaims()) != 0 {
				t.Fatal("published a notice from a bad server")
			}
		})
	}
}

func TestGCPRunLongPollsAndStopsOnCancel(t *testing.T) {
	f, srv := newFakeGCP(t)
	pub := newRecorder()
	w := NewGCPWatcher(GCPMetadataConfig{NodeConfig: NodeConfig{Location: "gcp-usc1"},
		Endpoint: srv.URL + "/computeMetadata/v1", WaitTime: 30 * time.Second}, Deps{Publisher: pub})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	for f.waiting() < 2 { // both values are now held in wait_for_change
		time.Sleep(5 * time.Millisecond)
	}
	f.set(func(f *fakeGCPMetadata) { f.values["instance/preempted"] = "TRUE" })
	got := pub.waitFor(t, 1)
	if got[0].Kind != events.ReclaimPreempted || got[0].Deadline.Sub(got[0].NoticeAt) != 30*time.Second {
		t.Errorf("notice = %+v, want preempted due 30 s after notice", got[0])
	}
	cancel() // must not wait out the 30 s long poll
	if err := <-done; err != nil {
		t.Fatalf("Run() = %v, want nil on cancel", err)
	}
	if n := len(pub.reclaims()); n != 1 {
		t.Fatalf("published %d notices, want 1", n)
	}
}
