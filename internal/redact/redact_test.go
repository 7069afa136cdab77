package redact_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/redact"
)

// secrets are the parts of the test URLs that must never come out.
var secrets = []string{"alice", "s3cret", "t0ken", "s1g", "fr4g"}

func leaks(s string) string {
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			return sec
		}
	}
	return ""
}

func TestURL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "nothing secret", in: "http://169.254.169.254", want: "http://169.254.169.254"},
		{name: "path kept", in: "http://h:80/metadata/v1", want: "http://h:80/metadata/v1"},
		{name: "user and password", in: "nats://alice:s3cret@nats.example:4222", want: "nats://REDACTED@nats.example:4222"},
		{name: "token as user", in: "nats://t0ken@nats.example:4222", want: "nats://REDACTED@nats.example:4222"},
		{name: "query values", in: "https://h/hook?token=t0ken&sig=s1g", want: "https://h/hook?sig=REDACTED&token=REDACTED"},
		{name: "userinfo and query", in: "http://alice:s3cret@10.0.0.1:8080/?token=t0ken",
			want: "http://REDACTED@10.0.0.1:8080/?token=REDACTED"},
		{name: "fragment dropped", in: "https://h/cb#access_token=fr4g", want: "https://h/cb"},
		{name: "no scheme", in: "alice:s3cret@nats.example:4222", want: "REDACTED@nats.example:4222"},
		{name: "unparseable", in: "http://alice:s3cret@h/%zz", want: "(unparseable URL)"},
		{name: "unparseable host", in: "::nope", want: "(unparseable URL)"},
		{name: "empty", in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact.URL(tt.in)
			if got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if sec := leaks(got); sec != "" {
				t.Errorf("URL(%q) = %q shows %q", tt.in, got, sec)
			}
		})
	}
}

// TestErrorRedactsHTTPClientErrors: net/http's errors name the URL with its query and user; an
// error from a real failed request, wrapped and joined, comes out clean.
func TestErrorRedactsHTTPClientErrors(t *testing.T) {
	raw := "http://alice:s3cret@127.0.0.1:1/metadata?token=t0ken"
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, doErr := http.DefaultClient.Do(req)
	if doErr == nil {
		t.Fatal("a request to port 1 succeeded")
	}
	_, parseErr := http.NewRequest(http.MethodGet, "http://alice:s3cret@h/%zz?token=t0ken", nil)
	tests := []struct {
		name string
		err  error
	}{
		{name: "client error", err: doErr},
		{name: "wrapped", err: fmt.Errorf("polling: %w", doErr)},
		{name: "joined", err: errors.Join(errors.New("first"), fmt.Errorf("second: %w", doErr))},
		{name: "parse error", err: parseErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if leaks(tt.err.Error()) == "" {
				t.Fatalf("the test error %q carries no secret to redact", tt.err)
			}
			got := redact.Error(tt.err)
			if sec := leaks(got.Error()); sec != "" {
				t.Errorf("Error() = %q, still shows %q", got, sec)
			}
			var ue *url.Error
			if !errors.As(got, &ue) {
				t.Errorf("the *url.Error is gone from the chain: %v", got)
			}
		})
	}
	if redact.Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
}

// TestURLKeepsHarmlessParameters: api-version and format were shown as REDACTED, which hid
// what a failed request asked for; they are shown, and a secret beside them is still masked.
func TestURLKeepsHarmlessParameters(t *testing.T) {
	got := redact.URL("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&format=json&sig=s3cret")
	want := "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&format=json&sig=REDACTED"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{"nats://alice:s3cret@h:4222", "https://h/x?token=t0ken", "alice:s3cret@h", "::nope", "",
		"https://h/x?api-version=2024&format=json&sig=s3cret"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := redact.URL(raw)
		u, err := url.Parse(raw)
		if err != nil {
			if got != "(unparseable URL)" {
				t.Fatalf("URL(%q) = %q, want the unparseable marker", raw, got)
			}
			return
		}
		// A secret leaks when it shows in the result but in none of the parts that stay.
		// The masked user keeps its "@": a password that is only "@" shows as the separator.
		// An opaque part without "@" ("scheme:00") holds no user and stays as it is.
		kept := u.Scheme + u.Host + u.EscapedPath() + u.Opaque + redact.Mask + "@"
		for k, vs := range u.Query() {
			kept += url.QueryEscape(k)
			if redact.KeepsValue(k) { // shown on purpose: harmless protocol parameters
				for _, v := range vs {
					kept += url.QueryEscape(v)
				}
			}
		}
		secret := []string{}
		if p, ok := u.User.Password(); ok {
			secret = append(secret, p)
		}
		for k, vs := range u.Query() {
			if redact.KeepsValue(k) {
				continue
			}
			for _, v := range vs {
				secret = append(secret, url.QueryEscape(v))
			}
		}
		for _, s := range secret {
			if s != "" && !strings.Contains(kept, s) && strings.Contains(got, s) {
				t.Fatalf("URL(%q) = %q shows %q", raw, got, s)
			}
		}
	})
}
