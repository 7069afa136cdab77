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
// receiver refused the action. A 3xx is final too: a redirect is never followed, since following
// it would send the signed action to a URL nobody configured (307) or turn it into a body-less GET
// whose 2xx would record an action as applied that no receiver got (302). Other failures are
// retried with exponential backoff; a 429 or 503 that asks for a longer wait with Retry-After
// gets it. A wait that would outlast ctx's deadline is not begun: the error says how long the
// receiver asked for, and carries it (RetryAfterDelay) for the caller's next try.
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
	where := redact.URL(h.URL)
	for attempt := 0; ; attempt++ {
		final, err := h.post(ctx, t.ActionID, body)
		switch {
		case err == nil:
			return nil
		case final:
			return err
		case attempt >= retries:
			return fmt.Errorf("webhook %s: gave up after %d attempts: %w", where, retries+1, err)
		}
		var ra retryAfter
		var asked time.Duration
		if errors.As(err, &ra) {
			asked = ra.RetryAfterDelay()
		}
		wait := delays.AtLeast(attempt+1, asked)
		if d, ok := ctx.Deadline(); ok && asked > 0 && wait > time.Until(d) {
			return fmt.Errorf("webhook %s: asked to retry after %v, beyond this call's deadline: %w", where, asked, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("webhook %s: %w (last: %w)", where, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// retryAfter is an error that carries the wait a receiver asked for.
type retryAfter interface{ RetryAfterDelay() time.Duration }

// busyError is a 429 or 503 answer; after is its Retry-After, 0 when it asked for none.
type busyError struct {
	msg   string
	after time.Duration
}

func (e *busyError) Error() string { return e.msg }

// RetryAfterDelay is the wait the receiver asked for, 0 when it did not ask.
func (e *busyError) RetryAfterDelay() time.Duration { return e.after }

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
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return false, nil
	case code >= 300 && code < 400:
		return true, fmt.Errorf("webhook %s answered %s redirecting to %s: redirects are not followed (the signed "+
			"action would go to a URL nobody configured); set the location's webhook url to the receiver's own address",
			where, resp.Status, redirectTarget(resp))
	case code == http.StatusNotFound:
		return true, fmt.Errorf("%w: webhook %s answered 404 %q", actuate.ErrNotFound, where, msg)
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return false, &busyError{msg: fmt.Sprintf("webhook %s: %s %q", where, resp.Status, msg), after: backoff.RetryAfter(resp.Header)}
	case code >= 400 && code < 500 && code != http.StatusRequestTimeout:
		return true, fmt.Errorf("webhook %s refused action %s: %s %q", where, id, resp.Status, msg)
	}
	return false, fmt.Errorf("webhook %s: %s %q", where, resp.Status, msg)
}

// redirectTarget names where a redirect pointed, redacted: it may carry a token of its own.
func redirectTarget(resp *http.Response) string {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "nowhere (no Location header)"
	}
	if u, err := resp.Request.URL.Parse(loc); err == nil {
		loc = u.String()
	}
	return redact.URL(loc)
}

// client is the hook's HTTP client, made never to follow a redirect (see Scale), whoever built it.
func (h *Hook) client() *http.Client {
	var c http.Client
	if h.Client != nil {
		c = *h.Client
	} else {
		c.Timeout = h.Timeout
		if c.Timeout <= 0 {
			c.Timeout = 10 * time.Second
		}
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// Desired cannot be read back from a webhook: an interrupted action is sent again with its id.
func (h *Hook) Desired(context.Context, actuate.Group) (int, error) { return 0, actuate.ErrUnknown }
