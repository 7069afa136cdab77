package backoff

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	const date = "Wed, 02 Dec 2026 10:00:00 GMT"
	tests := []struct {
		name       string
		retryAfter string
		date       string
		want       time.Duration
	}{
		{name: "seconds", retryAfter: "30", want: 30 * time.Second},
		{name: "spaces around", retryAfter: " 7 ", want: 7 * time.Second},
		{name: "absent", want: 0},
		{name: "zero", retryAfter: "0", want: 0},
		{name: "negative", retryAfter: "-5", want: 0},
		{name: "fraction is not delay-seconds", retryAfter: "1.5", want: 0},
		{name: "garbage", retryAfter: "soon", want: 0},
		{name: "huge is capped", retryAfter: "99999999999999999", want: maxRetryAfter},
		{name: "overflowing is ignored", retryAfter: "999999999999999999999999", want: 0},
		{name: "date after Date", retryAfter: "Wed, 02 Dec 2026 10:00:45 GMT", date: date, want: 45 * time.Second},
		{name: "date before Date", retryAfter: "Wed, 02 Dec 2026 09:59:00 GMT", date: date, want: 0},
		{name: "date without Date", retryAfter: "Wed, 02 Dec 2026 10:00:45 GMT", want: 0},
		{name: "date far ahead is capped", retryAfter: "Wed, 02 Dec 2099 10:00:00 GMT", date: date, want: maxRetryAfter},
		{name: "malformed date", retryAfter: "Wed, 99 Dec 2026 10:00:45 GMT", date: date, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.retryAfter != "" {
				h.Set("Retry-After", tt.retryAfter)
			}
			if tt.date != "" {
				h.Set("Date", tt.date)
			}
			if got := RetryAfter(h); got != tt.want {
				t.Errorf("RetryAfter(%q, Date %q) = %v, want %v", tt.retryAfter, tt.date, got, tt.want)
			}
		})
	}
}

// FuzzRetryAfter: any header pair gives a wait in [0, 24h], never a panic.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"30", "-1", "Wed, 02 Dec 2026 10:00:45 GMT", "9223372036854775807", "", "1e9"} {
		f.Add(s, "Wed, 02 Dec 2026 10:00:00 GMT")
	}
	f.Fuzz(func(t *testing.T, retryAfter, date string) {
		h := http.Header{"Retry-After": {retryAfter}, "Date": {date}}
		if got := RetryAfter(h); got < 0 || got > maxRetryAfter {
			t.Fatalf("RetryAfter(%q, %q) = %v, outside [0, %v]", retryAfter, date, got, maxRetryAfter)
		}
	})
}
