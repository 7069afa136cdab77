package webhook_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/webhook"
)

// TestErrorsHideTheHookURLCredentials: a hook URL with a user, a password and a token (as many
// receivers want) is named in errors without them, whether the receiver is down, refuses or fails.
func TestErrorsHideTheHookURLCredentials(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	answer := func(status int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	tests := []struct {
		name    string
		base    string
		wantErr string
	}{
		{name: "down", base: down, wantErr: "connection refused"},
		{name: "refused", base: answer(http.StatusUnprocessableEntity), wantErr: "refused action"},
		{name: "not found", base: answer(http.StatusNotFound), wantErr: "404"},
		{name: "failing", base: answer(http.StatusBadGateway), wantErr: "gave up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := strings.Replace(tt.base, "http://", "http://alice:s3cret@", 1) + "/hook?token=t0ken"
			h := &webhook.Hook{URL: u, Secret: secret, Retries: 1, Backoff: time.Millisecond}
			err := h.Scale(context.Background(), actuate.Target{ActionID: "act-1"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Scale() = %v, want an error containing %q", err, tt.wantErr)
			}
			for _, s := range []string{"alice", "s3cret", "t0ken"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("Scale() error shows %q: %v", s, err)
				}
			}
		})
	}
}
