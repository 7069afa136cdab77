package slack

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

func TestVerifier(t *testing.T) {
	body := []byte("payload=%7B%22type%22%3A%22block_actions%22%7D")
	now := start
	header := func(sig string, ts int64) http.Header {
		h := http.Header{}
		if sig != "" {
			h.Set("X-Slack-Signature", sig)
		}
		if ts != 0 {
			h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
		}
		return h
	}
	tests := []struct {
		name    string
		h       http.Header
		body    []byte
		wantErr error
	}{
		{"valid", header(Sign(testSecret, now.Unix(), body), now.Unix()), body, nil},
		{"4m59s old", header(Sign(testSecret, now.Unix()-299, body), now.Unix()-299), body, nil},
		{"5m01s old", header(Sign(testSecret, now.Unix()-301, body), now.Unix()-301), body, ErrStale},
		{"5m01s ahead", header(Sign(testSecret, now.Unix()+301, body), now.Unix()+301), body, ErrStale},
		{"forged secret", header(Sign("guess", now.Unix(), body), now.Unix()), body, ErrBadSignature},
		{"body changed", header(Sign(testSecret, now.Unix(), body), now.Unix()), append([]byte("x"), body...), ErrBadSignature},
		{"timestamp changed", header(Sign(testSecret, now.Unix(), body), now.Unix()-1), body, ErrBadSignature},
		{"v1 scheme", header("v1="+Sign(testSecret, now.Unix(), body)[3:], now.Unix()), body, ErrBadSignature},
		{"not hex", header("v0=zz", now.Unix()), body, ErrBadSignature},
		{"no signature", header("", now.Unix()), body, ErrMissingSignature},
		{"no timestamp", header(Sign(testSecret, now.Unix(), body), 0), body, ErrMissingSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVerifier(testSecret, func() time.Time { return now })
			if err := v.Verify(tt.h, tt.body); !errors.Is(err, tt.wantErr) {
				t.Errorf("Verify = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestVerifierRefusesReplaysUntilTheyGoStale(t *testing.T) {
	c := &clock{t: start}
	v := NewVerifier(testSecret, c.Now)
	body := []byte("payload=x")
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(start.Unix(), 10))
	h.Set("X-Slack-Signature", Sign(testSecret, start.Unix(), body))
	if err := v.Verify(h, body); err != nil {
		t.Fatal(err)
	}
	c.Add(4 * time.Minute)
	if err := v.Verify(h, body); !errors.Is(err, ErrReplayed) {
		t.Errorf("replay within the window: %v", err)
	}
	c.Add(2 * time.Minute)
	if err := v.Verify(h, body); !errors.Is(err, ErrStale) {
		t.Errorf("replay after the window: %v", err)
	}
	fresh := http.Header{}
	fresh.Set("X-Slack-Request-Timestamp", strconv.FormatInt(c.Now().Unix(), 10))
	fresh.Set("X-Slack-Signature", Sign(testSecret, c.Now().Unix(), body))
	if err := v.Verify(fresh, body); err != nil {
		t.Fatal(err)
	}
	if len(v.seen) != 1 {
		t.Errorf("verifier remembers %d signatures, want only the fresh one", len(v.seen))
	}
}

// TestSignMatchesSlackGo checks our signatures against slack-go's own verifier, which follows
// Slack's documented v0 scheme (and reads the real clock, hence a fresh timestamp).
func TestSignMatchesSlackGo(t *testing.T) {
	body := []byte("payload=%7B%7D")
	ts := time.Now().Unix()
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	h.Set("X-Slack-Signature", Sign(testSecret, ts, body))
	sv, err := slack.NewSecretsVerifier(h, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := sv.Ensure(); err != nil {
		t.Errorf("slack-go refuses our signature: %v", err)
	}
}
