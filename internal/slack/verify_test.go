package slack

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
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
		{"uppercase hex", header("v0="+strings.ToUpper(Sign(testSecret, now.Unix(), body)[3:]), now.Unix()), body, nil},
		{"uppercase scheme", header("V0="+Sign(testSecret, now.Unix(), body)[3:], now.Unix()), body, ErrBadSignature},
		{"scheme only", header("v0=", now.Unix()), body, ErrBadSignature},
		{"odd hex digits", header(Sign(testSecret, now.Unix(), body)[:66], now.Unix()), body, ErrBadSignature},
		{"signature doubled", header(Sign(testSecret, now.Unix(), body)+Sign(testSecret, now.Unix(), body)[3:], now.Unix()), body, ErrBadSignature},
		{"signature spaced", header(" "+Sign(testSecret, now.Unix(), body), now.Unix()), body, ErrBadSignature},
		{"timestamp not a number", slackHeaderStamp(Sign(testSecret, now.Unix(), body), "12e8"), body, ErrBadSignature},
		{"signed before the verifier started", header(Sign(testSecret, now.Unix()-601, body), now.Unix()-601), body, ErrStale},
		{"no signature", header("", now.Unix()), body, ErrMissingSignature},
		{"no timestamp", header(Sign(testSecret, now.Unix(), body), 0), body, ErrMissingSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: now.Add(-10 * time.Minute)} // started well before: nothing here predates it
			v := NewVerifier(testSecret, c.Now)
			c.Add(10 * time.Minute)
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

// TestVerifierRefusesReplaysInAnyCase: hex is case-blind, so a captured signature replayed in
// upper or mixed case is the same signature, and refused like the exact replay.
func TestVerifierRefusesReplaysInAnyCase(t *testing.T) {
	body := []byte("payload=x")
	sig := Sign(testSecret, start.Unix(), body)[3:]
	mixed := []byte(sig)
	for i := 0; i < len(mixed); i += 2 {
		mixed[i] = strings.ToUpper(string(mixed[i]))[0]
	}
	cases := map[string]string{"lower": sig, "upper": strings.ToUpper(sig), "mixed": string(mixed)}
	for firstName, first := range cases {
		t.Run("first "+firstName, func(t *testing.T) {
			v := NewVerifier(testSecret, (&clock{t: start}).Now)
			if err := v.Verify(slackHeader("v0="+first, start.Unix()), body); err != nil {
				t.Fatalf("first request: %v", err)
			}
			for name, replay := range cases {
				if err := v.Verify(slackHeader("v0="+replay, start.Unix()), body); !errors.Is(err, ErrReplayed) {
					t.Errorf("replay in %s case: %v, want %v", name, err, ErrReplayed)
				}
			}
		})
	}
}

// TestVerifierRefusesReplaysAcrossARestart: what a verifier saw is gone when its process
// restarts, so the new one refuses anything signed before it started; what is signed after is
// accepted.
func TestVerifierRefusesReplaysAcrossARestart(t *testing.T) {
	c := &clock{t: start}
	body := []byte("payload=x")
	h := slackHeader(Sign(testSecret, start.Unix(), body), start.Unix())
	if err := NewVerifier(testSecret, c.Now).Verify(h, body); err != nil {
		t.Fatal(err)
	}
	c.Add(3 * time.Second) // the process restarts
	restarted := NewVerifier(testSecret, c.Now)
	if err := restarted.Verify(h, body); !errors.Is(err, ErrReplayed) {
		t.Errorf("replay after a restart: %v, want %v", err, ErrReplayed)
	}
	if err := restarted.Verify(slackHeader(Sign(testSecret, c.Now().Unix(), body), c.Now().Unix()), body); err != nil {
		t.Errorf("a request signed after the restart: %v", err)
	}
}

func slackHeader(sig string, ts int64) http.Header {
	return slackHeaderStamp(sig, strconv.FormatInt(ts, 10))
}

// FuzzVerify feeds the verifier arbitrary signature and timestamp headers: it never panics,
// accepts only the signature of the body (in whatever case of hex) and never the same one twice.
func FuzzVerify(f *testing.F) {
	body := []byte("payload=x")
	good := Sign(testSecret, start.Unix(), body)
	for _, s := range []string{good, strings.ToUpper(good), "v0=", "v0=zz", good[:40], good + "00", "v1=" + good[3:], ""} {
		f.Add(s, strconv.FormatInt(start.Unix(), 10))
	}
	f.Add(good, "+"+strconv.FormatInt(start.Unix(), 10))
	f.Add(good, "1e9")
	f.Fuzz(func(t *testing.T, sig, stamp string) {
		v := NewVerifier(testSecret, (&clock{t: start}).Now)
		h := http.Header{"X-Slack-Signature": {sig}, "X-Slack-Request-Timestamp": {stamp}}
		if err := v.Verify(h, body); err != nil {
			return
		}
		ts, _ := strconv.ParseInt(stamp, 10, 64)
		if !strings.EqualFold(sig, Sign(testSecret, ts, body)) || sig[:3] != "v0=" {
			t.Fatalf("accepted signature %q at %q", sig, stamp)
		}
		if err := v.Verify(h, body); !errors.Is(err, ErrReplayed) {
			t.Fatalf("accepted %q twice: %v", sig, err)
		}
	})
}

func slackHeaderStamp(sig, stamp string) http.Header {
	h := http.Header{}
	h.Set("X-Slack-Signature", sig)
	h.Set("X-Slack-Request-Timestamp", stamp)
	return h
}
