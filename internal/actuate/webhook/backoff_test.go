package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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

// TestScaleHonoursRetryAfter: a receiver answering 429 with Retry-After: 30 is tried again no
// sooner than 30 s later, not after the 0.3, 0.7, 1.4 s of the backoff.
func TestScaleHonoursRetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if n.Add(1) <= 2 {
					w.Header().Set("Retry-After", "30")
					w.WriteHeader(status)
				}
			}))
			defer srv.Close()
			synctest.Test(t, func(t *testing.T) {
				sent := &sendTimes{next: &http.Transport{DisableKeepAlives: true}}
				h := &webhook.Hook{URL: srv.URL, Secret: secret, Client: &http.Client{Transport: sent},
					Retries: 5, Backoff: 300 * time.Millisecond}
				if err := h.Scale(context.Background(), actuate.Target{ActionID: "act-ra", Replicas: 1}); err != nil {
					t.Fatal(err)
				}
				if len(sent.times) != 3 {
					t.Fatalf("%d attempts, want 3", len(sent.times))
				}
				for i := range 2 {
					if gap := sent.times[i+1].Sub(sent.times[i]); gap < 30*time.Second {
						t.Errorf("wait %d = %v, want at least the 30s asked for", i+1, gap)
					}
				}
			})
		})
	}
}

// TestRetryAfterBeyondTheDeadline: a wait the call's deadline cannot hold is not slept through;
// the error says what was asked and carries it for the caller's next try.
func TestRetryAfterBeyondTheDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := &webhook.Hook{URL: srv.URL, Secret: secret, Backoff: time.Millisecond}
	err := h.Scale(ctx, actuate.Target{ActionID: "act-d"})
	if err == nil || !strings.Contains(err.Error(), "retry after 2m0s") || ctx.Err() != nil {
		t.Fatalf("err = %v (ctx %v), want the asked wait named before the deadline", err, ctx.Err())
	}
	var ra interface{ RetryAfterDelay() time.Duration }
	if !errors.As(err, &ra) || ra.RetryAfterDelay() != 2*time.Minute {
		t.Errorf("err carries no 2m Retry-After: %v", err)
	}
}
