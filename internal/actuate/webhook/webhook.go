// Package webhook scales replicas on platforms without a Kubernetes API: it POSTs each action as
// JSON to a URL of the location's, signed so the receiver knows it came from Bursar.
//
// The signature is HMAC-SHA256 over "<timestamp>.<body>" with a shared secret, sent as
//
//	Bursar-Timestamp: 1767261600
//	Bursar-Signature: v1=<hex>
//	Idempotency-Key: <action id>
//
// A receiver should reject old timestamps (replays) and deduplicate by the action id: an action
// interrupted by a restart is sent again with the same id. An action of kind "checkpoint" asks a
// job's instances in the group to save their progress now (a reclaim notice reached one); it
// carries the group's count unchanged, and the receiver starts or stops nothing for it.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/redact"
)

// Hook is the webhook actuator of one location.
type Hook struct {
	URL     string
	Secret  []byte
	Client  *http.Client  // default: one with Timeout per attempt
	Timeout time.Duration // per attempt (default 10s)
	Retries int           // attempts after the first (default 5)
	Backoff time.Duration // ceiling of the first wait between attempts, doubled each time (default 500ms)
	// MaxBackoff caps the wait between attempts (default 30s). Waits are jittered, so hooks
	// failing together do not retry in lockstep.
	MaxBackoff time.Duration
	Now        func() time.Time
}

var _ actuate.Actuator = (*Hook)(nil)

// Sign returns the signature header value for body at timestamp ts.
func Sign(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a request's signature and that its timestamp is within maxAge of now; receivers
// (and the tests) use it. ts, sig and body are the request's, so anything may be in them: ts
// must be decimal Unix seconds and sig exactly what Sign writes (lowercase hex), or it fails.
func Verify(secret []byte, ts, sig string, body []byte, now time.Time, maxAge time.Duration) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("Bursar-Timestamp %.40q is not a Unix time in seconds", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > maxAge || d < -maxAge {
		return fmt.Errorf("timestamp %s is %v away from now", ts, d)
	}
	if !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(sig)) {
		return errors.New("signature does not match")
	}
	return nil
}

// Scale POSTs t until the hook answers 2xx. 4xx answers other than 408 and 429 are final: the
// receiver refused the action. Other failures are retried with exponential backoff.
func (h *Hook) Scale(ctx context.Context, t actuate.Target) error {
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encoding action %s: %w", t.ActionID, err)
	}
	delays := backoff.Policy{Min: h.Backoff, Max: h.MaxBackoff}
	if delays.Min <= 0 {
		delays.Min = 500 * time.Millisecond
	}
	if delays.Max <= 0 {
		delays.Max = 30 * time.Second
	}
	retries := h.Retries
	if retries <= 0 {
		retries = 5
	}
	var last error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("webhook %s: %w (last: %w)", redact.URL(h.URL), ctx.Err(), last)
			case <-time.After(delays.Delay(attempt)):
			}
		}
		final, err := h.post(ctx, t.ActionID, body)
		if err == nil {
			return nil
		}
		if final {
			return err
		}
		last = err
	}
	return fmt.Errorf("webhook %s: gave up after %d attempts: %w", redact.URL(h.URL), retries+1, last)
}

func (h *Hook) post(ctx context.Context, id string, body []byte) (final bool, err error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	where := redact.URL(h.URL) // a hook URL often carries a token
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return true, fmt.Errorf("webhook %s: %w", where, redact.Error(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Bursar-Timestamp", ts)
	req.Header.Set("Bursar-Signature", Sign(h.Secret, ts, body))
	req.Header.Set("Idempotency-Key", id)
	resp, err := h.client().Do(req)
	if err != nil {
		return false, fmt.Errorf("webhook %s: %w", where, redact.Error(err))
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusNotFound:
		return true, fmt.Errorf("%w: webhook %s answered 404 %q", actuate.ErrNotFound, where, msg)
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != 408 && resp.StatusCode != 429:
		return true, fmt.Errorf("webhook %s refused action %s: %s %q", where, id, resp.Status, msg)
	}
	return false, fmt.Errorf("webhook %s: %s %q", where, resp.Status, msg)
}

func (h *Hook) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	t := h.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	return &http.Client{Timeout: t}
}

// Desired cannot be read back from a webhook: an interrupted action is sent again with its id.
func (h *Hook) Desired(context.Context, actuate.Group) (int, error) { return 0, actuate.ErrUnknown }
