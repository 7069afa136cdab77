package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/webhook"
)

// sendTimes records when each request leaves, on the caller's clock.
type sendTimes struct {
	mu    sync.Mutex
	times []time.Time
	next  http.RoundTripper
}

func (s *sendTimes) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	return s.next.RoundTrip(req)
}

// TestScaleBackoff: against a receiver failing with 503, the waits between attempts lie in the
// upper half of their doubling ceiling, stop growing at MaxBackoff, and differ between hooks
// that failed together (without jitter every hook would retry at the same instants).
func TestScaleBackoff(t *testing.T) {
	const hooks = 5
	ceilings := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}
	// Always unavailable; signatures are not checked, as the bubble's clock is not the server's.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	firstWaits := map[time.Duration]bool{}
	for range hooks {
		synctest.Test(t, func(t *testing.T) {
			// No kept-alive connection: a goroutine reading a socket would hold the bubble's clock.
			sent := &sendTimes{next: &http.Transport{DisableKeepAlives: true}}
			h := &webhook.Hook{URL: srv.URL, Secret: secret, Client: &http.Client{Transport: sent},
				Retries: len(ceilings), Backoff: time.Second, MaxBackoff: 5 * time.Second}
			err := h.Scale(context.Background(), actuate.Target{ActionID: "act-b", Replicas: 1})
			if err == nil || !strings.Contains(err.Error(), "gave up") {
				t.Fatalf("err = %v, want giving up", err)
			}
			if len(sent.times) != len(ceilings)+1 {
				t.Fatalf("%d attempts, want %d", len(sent.times), len(ceilings)+1)
			}
			for i, c := range ceilings {
				if gap := sent.times[i+1].Sub(sent.times[i]); gap < c-c/2 || gap > c {
					t.Errorf("wait %d = %v, want within [%v, %v]", i+1, gap, c-c/2, c)
				}
			}
			firstWaits[sent.times[1].Sub(sent.times[0])] = true
		})
	}
	if len(firstWaits) < 2 {
		t.Errorf("%d hooks failing together all waited %v before retrying: no jitter", hooks, firstWaits)
	}
}
