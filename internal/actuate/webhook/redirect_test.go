package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/webhook"
)

// TestRedirectIsNeverFollowed: a hook that answers 302 or 307 pointing at another host fails,
// naming where it pointed (without its token); the other host gets nothing, neither a body-less
// GET whose 200 would mark the action applied (302) nor the signed action itself (307).
func TestRedirectIsNeverFollowed(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var elsewhere atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				elsewhere.Add(1) // answers 200 to anything, as the receiver did
			}))
			defer other.Close()
			var tries atomic.Int32
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tries.Add(1)
				http.Redirect(w, r, other.URL+"/elsewhere?token=t0ken", status)
			}))
			defer hook.Close()
			h := &webhook.Hook{URL: hook.URL, Secret: secret, Retries: 2, Backoff: time.Millisecond}
			err := h.Scale(context.Background(), actuate.Target{ActionID: "act-r", Replicas: 2})
			if err == nil {
				t.Fatalf("a %d was taken as the action applied", status)
			}
			if n := elsewhere.Load(); n != 0 {
				t.Errorf("the redirect's target got %d requests, want none", n)
			}
			if n := tries.Load(); n != 1 {
				t.Errorf("the hook got %d requests, want 1 (a redirect is final)", n)
			}
			for _, want := range []string{"redirect", other.URL[len("http://"):] + "/elsewhere"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to name %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "t0ken") {
				t.Errorf("err shows the redirect's token: %v", err)
			}
		})
	}
}

// TestRedirectIsNeverFollowedWithAGivenClient: a client the caller built (with its own redirect
// policy) still does not follow one.
func TestRedirectIsNeverFollowedWithAGivenClient(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	hook := httptest.NewServer(http.RedirectHandler(other.URL, http.StatusTemporaryRedirect))
	defer hook.Close()
	h := &webhook.Hook{URL: hook.URL, Secret: secret, Client: &http.Client{}, Retries: 1, Backoff: time.Millisecond}
	if err := h.Scale(context.Background(), actuate.Target{ActionID: "act-c"}); err == nil || elsewhere.Load() != 0 {
		t.Errorf("err = %v, redirect target got %d requests; want a failure and none", err, elsewhere.Load())
	}
}
