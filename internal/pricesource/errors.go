// Package pricesource fetches GPU prices from providers and price files and normalizes them
// into pricing catalogs. Each provider is one small type with a Fetch method; the consumer
// (internal/collect, the prices command) declares the interface it needs. Sources never retry:
// the collector owns retries and backoff, using the kind and Retry-After carried by *Error.
package pricesource

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/backoff"
)

// Kind classifies a fetch failure for metrics and for the collector's retry decision.
type Kind string

// The kinds of fetch failure.
const (
	KindAuth        Kind = "auth"         // 401/403: credentials are wrong; retrying will not help
	KindRateLimited Kind = "rate_limited" // 429 or a throttling code: wait, then retry
	KindServer      Kind = "server"       // 5xx: retry with backoff
	KindClient      Kind = "client"       // other 4xx: the request is wrong
	KindNetwork     Kind = "network"      // no response at all
	KindDecode      Kind = "decode"       // truncated or malformed body
	KindInvalid     Kind = "invalid"      // well-formed but wrong data (negative price, not USD)
	KindAPI         Kind = "api"          // the API answered 200 with an error document, or paged in a cycle
	KindTimeout     Kind = "timeout"      // no headers, no body progress, or the fetch's deadline passed
	KindTooLarge    Kind = "too_large"    // a body over the source's cap
)

// ErrPageCycle is a pagination token or link that points back at a page already read: a provider
// bug that would otherwise be followed until a page limit or forever.
var ErrPageCycle = errors.New("pagination cycle")

// Error is a failed fetch. It names the source and the endpoint without its query string, so
// that API keys passed as query parameters never reach logs.
type Error struct {
	Source     string
	Where      string // URL without query, or file:line
	Kind       Kind
	Status     int           // HTTP status, 0 when none
	RetryAfter time.Duration // from a Retry-After header, 0 when absent
	Err        error
}

func (e *Error) Error() string {
	var pe *fs.PathError
	if e.Status == 0 && errors.As(e.Err, &pe) {
		// A price file that cannot be read: say the file, not "client at FILE".
		return fmt.Sprintf("%s: reading the price file %s: %v", e.Source, e.Where, e.Err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Source, e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Where != "" {
		fmt.Fprintf(&b, " at %s", e.Where)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if hint := e.hint(); hint != "" {
		b.WriteString("; " + hint)
	}
	return b.String()
}

func (e *Error) hint() string {
	switch e.Kind {
	case KindAuth:
		return "check the credentials configured for this source"
	case KindRateLimited:
		return "the provider is rate limiting; the collector will retry later"
	case KindTimeout:
		return "the provider did not answer in time; raise the source's timeout if it is only slow"
	}
	return ""
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorKind returns the kind as a metric label value.
func (e *Error) ErrorKind() string { return string(e.Kind) }

// RetryAfterDelay is the wait the provider asked for, 0 when it did not ask.
func (e *Error) RetryAfterDelay() time.Duration { return e.RetryAfter }

// Retryable reports whether trying again may succeed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindRateLimited, KindServer, KindNetwork, KindDecode, KindAPI, KindTimeout:
		return true
	}
	return false
}

// KindOf returns the kind of err, KindNetwork for errors that are not *Error (such as a
// cancelled context).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindNetwork
}

// statusError builds the error for a non-2xx response.
func statusError(source, where string, resp *http.Response, body []byte) *Error {
	e := &Error{Source: source, Where: where, Status: resp.StatusCode, Kind: KindClient}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e.Kind = KindAuth
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Kind = KindRateLimited
		e.RetryAfter = backoff.RetryAfter(resp.Header)
	case resp.StatusCode >= 500:
		e.Kind = KindServer
		e.RetryAfter = backoff.RetryAfter(resp.Header)
	}
	if msg := snippet(body); msg != "" {
		e.Err = errors.New(msg)
	}
	return e
}

// snippet is the start of an error body, on one line, for the error message.
func snippet(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
