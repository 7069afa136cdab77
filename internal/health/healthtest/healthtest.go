// Package healthtest helps the programs' tests probe their /livez and /readyz endpoints.
package healthtest

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// FreeAddr returns a loopback address with a port nothing listens on now, for a program's
// --metrics-listen in a test that must know where to probe.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Get returns the status code and body of GET url; code 0 when nothing answers.
func Get(url string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Await polls GET url until it answers want and returns the body; the test fails after a
// minute without it, showing the last answer.
func Await(tb testing.TB, url string, want int) string {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := Get(url)
		if code == want {
			return body
		}
		if time.Now().After(deadline) {
			tb.Fatalf("GET %s: still %d %q after a minute, want %d", url, code, body, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
