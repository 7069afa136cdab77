package backoff

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter bounds what a Retry-After header can ask for, so a huge number neither overflows
// a Duration nor parks a caller for years; callers cap it further by their own deadlines.
const maxRetryAfter = 24 * time.Hour

// RetryAfter reads the wait a response's Retry-After header asks for: delay-seconds, or an
// HTTP date measured from the response's own Date header (so no local clock is read; a date
// without a Date header is ignored). It returns 0 when the header is absent, malformed, negative
// or in the past, and at most 24h.
func RetryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return min(time.Duration(min(s, int64(maxRetryAfter/time.Second)))*time.Second, maxRetryAfter)
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	now, err := http.ParseTime(h.Get("Date"))
	if err != nil || !at.After(now) {
		return 0
	}
	return min(at.Sub(now), maxRetryAfter)
}
