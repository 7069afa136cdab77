package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/webhook"
)

var secret = []byte("s3cret-for-tests")

// receiver is a provisioning hook that checks signatures and answers from a script.
type receiver struct {
	mu      sync.Mutex
	answers []int // status per request; 200 once exhausted
	got     []actuate.Target
	bad     int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := webhook.Verify(secret, req.Header.Get("Bursar-Timestamp"), req.Header.Get("Bursar-Signature"), body,
		time.Now(), 5*time.Minute); err != nil {
		r.bad++
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var t actuate.Target
	if err := json.Unmarshal(body, &t); err != nil || req.Header.Get("Idempotency-Key") != t.ActionID {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.got = append(r.got, t)
	status := http.StatusOK
	if len(r.answers) > 0 {
		status, r.answers = r.answers[0], r.answers[1:]
	}
	w.WriteHeader(status)
}

func TestScale(t *testing.T) {
	target := actuate.Target{ActionID: "act-1", Group: actuate.Group{Workload: "svc", Location: "lambda", Market: "on_demand"},
		Replicas: 3, Kind: "launch"}
	tests := []struct {
		name      string
		secret    []byte
		answers   []int
		wantErr   string // "" for success
		wantTries int
	}{
		{"2xx at once", secret, nil, "", 1},
		{"5xx then 2xx is retried", secret, []int{502, 503}, "", 3},
		{"429 is retried", secret, []int{429}, "", 2},
		{"4xx is final", secret, []int{422}, "refused action act-1", 1},
		{"404 means not found", secret, []int{404}, "scale target not found", 1},
		{"always 5xx gives up", secret, []int{500, 500, 500, 500}, "gave up after 3 attempts", 3},
		{"a wrong secret is refused", []byte("wrong"), nil, "401", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &receiver{answers: tt.answers}
			srv := httptest.NewServer(rc)
			defer srv.Close()
			h := &webhook.Hook{URL: srv.URL, Secret: tt.secret, Retries: 2, Backoff: time.Millisecond}
			err := h.Scale(context.Background(), target)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if len(rc.got) != tt.wantTries {
				t.Errorf("receiver accepted %d signed requests, want %d", len(rc.got), tt.wantTries)
			}
			for _, g := range rc.got {
				if g != target {
					t.Errorf("received %+v, want %+v", g, target)
				}
			}
		})
	}
}

func TestNotFoundIsErrNotFound(t *testing.T) {
	srv := httptest.NewServer(&receiver{answers: []int{404}})
	defer srv.Close()
	err := (&webhook.Hook{URL: srv.URL, Secret: secret}).Scale(context.Background(), actuate.Target{ActionID: "x"})
	if !errors.Is(err, actuate.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

func TestVerifyRejectsOldTimestamps(t *testing.T) {
	body := []byte(`{"action_id":"a"}`)
	old := time.Now().Add(-time.Hour)
	ts := strconvUnix(old)
	if err := webhook.Verify(secret, ts, webhook.Sign(secret, ts, body), body, time.Now(), 5*time.Minute); err == nil {
		t.Error("a signature an hour old was accepted")
	}
	if err := webhook.Verify(secret, ts, webhook.Sign(secret, ts, body), body, old, 5*time.Minute); err != nil {
		t.Errorf("a fresh signature was refused: %v", err)
	}
}

func strconvUnix(t time.Time) string {
	b, _ := json.Marshal(t.Unix())
	return string(b)
}
