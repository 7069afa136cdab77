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
//
// A signature is remembered by its bytes, not its text: hex is case-blind, so "v0=AB…" and
// "v0=ab…" are the same signature and the second is a replay. What was seen is kept in memory
// only, so a verifier refuses every request signed before it was made (in an earlier second): a
// request accepted before a restart cannot be replayed after it. The price is that a click Slack
// signed just before a restart is refused, and the user clicks again; the hole left is a replay
// signed, accepted and repeated within the one second in which the new process started.
type Verifier struct {
	secret string
	now    func() time.Time
	start  int64 // Unix second the verifier was made in: older requests are refused

	mu   sync.Mutex
	seen map[string]time.Time // signature's bytes -> when it can be forgotten
}

// NewVerifier returns a verifier for the signing secret, reading time from now.
func NewVerifier(secret string, now func() time.Time) *Verifier {
	return &Verifier{secret: secret, now: now, start: now().Unix(), seen: map[string]time.Time{}}
}

// Verify checks the request's headers against its raw body.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	sig, stamp := h.Get("X-Slack-Signature"), h.Get("X-Slack-Request-Timestamp")
	if sig == "" || stamp == "" || v.secret == "" {
		return ErrMissingSignature
	}
	ts, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %.40q is not a number", ErrBadSignature, stamp)
	}
	now := v.now()
	if d := now.Sub(time.Unix(ts, 0)); d > MaxAge || d < -MaxAge {
		return ErrStale
	}
	raw, err := signature(sig)
	want, _ := hex.DecodeString(strings.TrimPrefix(Sign(v.secret, ts, body), "v0="))
	if err != nil || !hmac.Equal(raw, want) {
		return ErrBadSignature
	}
	if ts < v.start {
		return fmt.Errorf("%w: it was signed before this process started, and what was seen before is not kept", ErrReplayed)
	}
	return v.once(string(raw), time.Unix(ts, 0).Add(MaxAge), now)
}

// signature decodes a "v0=<hex>" header value to the signature's bytes, in either case of hex.
func signature(sig string) ([]byte, error) {
	hexSig, ok := strings.CutPrefix(sig, "v0=")
	if !ok {
		return nil, errors.New(`no "v0=" scheme`)
	}
	if len(hexSig) != 2*sha256.Size {
		return nil, fmt.Errorf("%d hex digits, want %d", len(hexSig), 2*sha256.Size)
	}
	return hex.DecodeString(hexSig)
}

// once records the signature key as seen until until, refusing it if it was seen already.
func (v *Verifier) once(key string, until, now time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for s, u := range v.seen {
		if now.After(u) {
			delete(v.seen, s)
		}
	}
	if _, dup := v.seen[key]; dup {
		return ErrReplayed
	}
	v.seen[key] = until
	return nil
}
