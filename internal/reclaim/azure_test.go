package reclaim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// fakeAzure behaves like Azure's instance metadata service: 400 without Metadata: true, the
// Scheduled Events document on GET, StartRequests on POST, and the VM's compute facts as text.
type fakeAzure struct {
	mu     sync.Mutex
	doc    []byte
	status int
	delay  time.Duration
	acks   [][]byte
	gets   int
}

func newFakeAzure(t *testing.T) (*fakeAzure, *httptest.Server) {
	f := &fakeAzure{doc: fixture(t, "azure-scheduledevents-empty.json")}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAzure) set(fn func(f *fakeAzure)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeAzure) getCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets
}

func (f *fakeAzure) ackBodies() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.acks...)
}

func (f *fakeAzure) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Metadata") != "true" {
		http.Error(w, `{"error":"Bad request. Required metadata header not specified"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	doc, status, delay := f.doc, f.status, f.delay
	f.mu.Unlock()
	compute := map[string]string{"name": "vm-spot", "location": "eastus", "zone": "1"}
	switch {
	case strings.HasPrefix(r.URL.Path, "/metadata/instance/compute/"):
		w.Write([]byte(compute[strings.TrimPrefix(r.URL.Path, "/metadata/instance/compute/")]))
		return
	case r.URL.Path != "/metadata/scheduledevents" || r.URL.Query().Get("api-version") == "":
		http.NotFound(w, r)
		return
	}
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
	f.set(func(f *fakeAzure) { f.gets++ })
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		f.set(func(f *fakeAzure) { f.acks = append(f.acks, b) })
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

func newAzureWatcher(srv *httptest.Server, pub Publisher, clk *clock) *AzureWatcher {
	return NewAzureWatcher(AzureEventsConfig{NodeConfig: NodeConfig{Location: "azure-eastus"},
		Endpoint: srv.URL, Timeout: 200 * time.Millisecond}, Deps{Publisher: pub, Now: clk.Now})
}

func TestAzurePublishesPreemptOnceAndAcks(t *testing.T) {
	tests := []struct {
		name         string
		doc          string
		wantNotices  int
		wantKind     events.ReclaimKind
		wantDeadline time.Time
	}{
		{name: "no events", doc: `{"DocumentIncarnation": 0, "Events": []}`},
		{name: "recorded preempt", doc: string(fixture(t, "azure-scheduledevents-preempt.json")), wantNotices: 1,
			wantKind: events.ReclaimPreempted, wantDeadline: mustTime(t, "2022-08-09T17:07:32Z")},
		{name: "terminate with an RFC 3339 NotBefore", doc: `{"DocumentIncarnation":3,"Events":[{"EventId":"E2",
			"EventStatus":"Scheduled","EventType":"Terminate","ResourceType":"VirtualMachine","Resources":["vm-spot"],
			"NotBefore":"2022-08-09T17:20:00Z"}]}`, wantNotices: 1,
			wantKind: events.ReclaimInterruption, wantDeadline: mustTime(t, "2022-08-09T17:20:00Z")},
		{name: "another VM's preempt", doc: strings.ReplaceAll(string(fixture(t, "azure-scheduledevents-preempt.json")),
			`"vm-spot"`, `"vm-other"`)},
		{name: "a reboot is not a reclaim", doc: strings.ReplaceAll(string(fixture(t, "azure-scheduledevents-preempt.json")),
			`"Preempt"`, `"Reboot"`)},
		{name: "a started preempt is due now", doc: `{"DocumentIncarnation":2,"Events":[{"EventId":"E3","EventStatus":"Started",
			"EventType":"Preempt","Resources":["vm-spot"],"NotBefore":""}]}`, wantNotices: 1,
			wantKind: events.ReclaimPreempted, wantDeadline: mustTime(t, "2022-08-09T17:07:05Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeAzure(t)
			f.set(func(f *fakeAzure) { f.doc = []byte(tt.doc) })
			pub, clk := newRecorder(), newClock(mustTime(t, "2022-08-09T17:07:05Z"))
			w := newAzureWatcher(srv, pub, clk)
			for range 3 {
				if err := w.Poll(context.Background()); err != nil {
					t.Fatal(err)
				}
				clk.step(5 * time.Second)
			}
			got := pub.reclaims()
			if len(got) != tt.wantNotices {
				t.Fatalf("published %d notices, want %d", len(got), tt.wantNotices)
			}
			if len(got) == 0 {
				return
			}
			e := got[0]
			if e.Kind != tt.wantKind || !e.Deadline.Equal(tt.wantDeadline) || e.Instance != "vm-spot" ||
				e.Region != "eastus" || e.Zone != "1" || e.Provider != "azure" {
				t.Errorf("notice = %+v, want %s due %s", e, tt.wantKind, tt.wantDeadline)
			}
			if err := w.AckReclaim(context.Background(), e.ID); err != nil {
				t.Fatal(err)
			}
			var ack struct{ StartRequests []struct{ EventId string } }
			acks := f.ackBodies()
			if len(acks) != 1 || json.Unmarshal(acks[0], &ack) != nil || len(ack.StartRequests) != 1 {
				t.Fatalf("StartRequests posted: %q, want one", acks)
			}
			var doc ScheduledEvents
			json.Unmarshal([]byte(tt.doc), &doc)
			if ack.StartRequests[0].EventId != doc.Events[0].EventID {
				t.Errorf("acked %q, want %q", ack.StartRequests[0].EventId, doc.Events[0].EventID)
			}
		})
	}
}

func TestAzureAckOfAnUnknownReclaimFails(t *testing.T) {
	_, srv := newFakeAzure(t)
	w := newAzureWatcher(srv, newRecorder(), newClock(mustTime(t, "2022-08-09T17:07:05Z")))
	if err := w.AckReclaim(context.Background(), "no-such-id"); err == nil {
		t.Fatal("AckReclaim() of an unknown reclaim succeeded")
	}
}

func TestAzurePollRejectsABadService(t *testing.T) {
	tests := []struct {
		name    string
		break_  func(f *fakeAzure)
		wantErr string
	}{
		{name: "5xx", break_: func(f *fakeAzure) { f.status = http.StatusBadGateway }, wantErr: "HTTP 502"},
		{name: "timeout", break_: func(f *fakeAzure) { f.delay = 2 * time.Second }, wantErr: "deadline exceeded"},
		{name: "malformed json", break_: func(f *fakeAzure) { f.doc = []byte(`{"Events": [{"EventId": 7}]}`) },
			wantErr: "decoding scheduled events"},
		{name: "bad NotBefore", break_: func(f *fakeAzure) {
			f.doc = []byte(`{"Events":[{"EventId":"E","EventType":"Preempt","Resources":["vm-spot"],"NotBefore":"tomorrow"}]}`)
		}, wantErr: "NotBefore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeAzure(t)
			pub := newRecorder()
			w := newAzureWatcher(srv, pub, newClock(mustTime(t, "2022-08-09T17:07:05Z")))
			f.set(tt.break_)
			err := w.Poll(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Poll() = %v, want an error containing %q", err, tt.wantErr)
			}
			if len(pub.reclaims()) != 0 {
				t.Fatal("published a notice from a bad service")
			}
		})
	}
}

// TestAzureNeverAcksByDefault: polling a recorded Preempt (and the other kinds of event) for as
// long as it is listed never sends StartRequests, which would end the VM before NotBefore and
// take away the notice a replacement needs; the explicit Ack sends exactly Azure's documented
// request.
func TestAzureNeverAcksByDefault(t *testing.T) {
	preempt := string(fixture(t, "azure-scheduledevents-preempt.json"))
	tests := []struct {
		name string
		doc  string
	}{
		{name: "recorded preempt", doc: preempt},
		{name: "terminate", doc: strings.ReplaceAll(preempt, `"Preempt"`, `"Terminate"`)},
		{name: "started preempt", doc: strings.ReplaceAll(strings.ReplaceAll(preempt, `"Scheduled"`, `"Started"`),
			`"Tue, 09 Aug 2022 17:07:32 GMT"`, `""`)},
		{name: "another VM's preempt", doc: strings.ReplaceAll(preempt, `"vm-spot"`, `"vm-other"`)},
		{name: "a reboot", doc: strings.ReplaceAll(preempt, `"Preempt"`, `"Reboot"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeAzure(t)
			f.set(func(f *fakeAzure) { f.doc = []byte(tt.doc) })
			w := NewAzureWatcher(AzureEventsConfig{NodeConfig: NodeConfig{Location: "azure-eastus"},
				Endpoint: srv.URL, Interval: 5 * time.Millisecond, Timeout: time.Second},
				Deps{Publisher: newRecorder(), Now: newClock(mustTime(t, "2022-08-09T17:07:05Z")).Now})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			patience := time.After(10 * time.Second)
			for f.getCount() < 5 {
				select {
				case <-patience:
					t.Fatalf("only %d polls in 10s", f.getCount())
				case <-time.After(5 * time.Millisecond):
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if acks := f.ackBodies(); len(acks) != 0 {
				t.Fatalf("the watcher sent StartRequests on its own: %q", acks)
			}
		})
	}
}

// TestAzureAckSendsTheDocumentedRequest: an explicit Ack posts Azure's StartRequests body as
// recorded in the shared wire formats.
func TestAzureAckSendsTheDocumentedRequest(t *testing.T) {
	want := fixture(t, "azure-scheduledevents-ack-request.json")
	f, srv := newFakeAzure(t)
	w := newAzureWatcher(srv, newRecorder(), newClock(mustTime(t, "2022-08-09T17:07:05Z")))
	if err := w.Ack(context.Background(), "C1BF8322-4CBF-4FC4-9C45-B40CF3106D0E"); err != nil {
		t.Fatal(err)
	}
	acks := f.ackBodies()
	if len(acks) != 1 {
		t.Fatalf("posted %q, want one body", acks)
	}
	if got := mustCompact(t, acks[0]); got != mustCompact(t, want) {
		t.Errorf("posted %s, want %s", got, want)
	}
}

func mustCompact(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
