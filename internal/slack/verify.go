package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Why an interaction request was refused. All of them answer 401 and change nothing.
var (
	ErrMissingSignature = errors.New("missing X-Slack-Signature or X-Slack-Request-Timestamp")
	ErrBadSignature     = errors.New("signature does not match the body")
	ErrStale            = errors.New("request timestamp is more than 5 minutes from now")
	ErrReplayed         = errors.New("request was already seen")
)

// MaxAge is how far a request's timestamp may be from now, as Slack recommends.
const MaxAge = 5 * time.Minute

// Sign returns Slack's v0 signature of body sent at ts: "v0=" and the hex HMAC-SHA256 of
// "v0:{ts}:{body}" under the signing secret.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Verifier checks Slack request signatures. It is slack-go's SecretsVerifier with two additions:
// the clock is injected (so staleness is testable) and each signature is accepted once, so a
// captured request cannot be replayed within the five minutes its timestamp stays fresh.
type Verifier struct {
	secret string
	now    func() time.Time

	mu   sync.Mutex
	seen map[string]time.Time // signature -> when it can be forgotten
}

// NewVerifier returns a verifier for the signing secret, reading time from now.
func NewVerifier(secret string, now func() time.Time) *Verifier {
	return &Verifier{secret: secret, now: now, seen: map[string]time.Time{}}
}

// Verify checks the request's headers against its raw body.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	sig, stamp := h.Get("X-Slack-Signature"), h.Get("X-Slack-Request-Timestamp")
	if sig == "" || stamp == "" || v.secret == "" {
		return ErrMissingSignature
	}
	ts, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q is not a number", ErrBadSignature, stamp)
	}
	now := v.now()
	if d := now.Sub(time.Unix(ts, 0)); d > MaxAge || d < -MaxAge {
		return ErrStale
	}
	got, ok := strings.CutPrefix(sig, "v0=")
	raw, err := hex.DecodeString(got)
	want, _ := hex.DecodeString(strings.TrimPrefix(Sign(v.secret, ts, body), "v0="))
	if !ok || err != nil || !hmac.Equal(raw, want) {
		return ErrBadSignature
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for s, until := range v.seen {
		if now.After(until) {
			delete(v.seen, s)
		}
	}
	if _, dup := v.seen[sig]; dup {
		return ErrReplayed
	}
	v.seen[sig] = time.Unix(ts, 0).Add(MaxAge)
	return nil
}
