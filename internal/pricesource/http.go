package pricesource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// maxBody bounds one response body; a GCP catalog page of 5,000 SKUs is about 10 MB.
const maxBody = 64 << 20

// Secret is a credential. It prints as [redacted] so that it cannot leak through %v, logs or
// errors by accident.
type Secret string

func (Secret) String() string   { return "[redacted]" }
func (Secret) GoString() string { return "[redacted]" }

// Reveal returns the credential, for the one place that puts it on the wire.
func (s Secret) Reveal() string { return string(s) }

// LoadSecret reads a credential from the environment variable env or, if that is unset, from
// the file path (trailing newline trimmed). Errors name the variable or file, never the value.
func LoadSecret(env, path string) (Secret, error) {
	if env != "" {
		if v, ok := os.LookupEnv(env); ok && strings.TrimSpace(v) != "" {
			return Secret(strings.TrimSpace(v)), nil
		}
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("reading credential file: %w", err)
		}
		if v := strings.TrimSpace(string(b)); v != "" {
			return Secret(v), nil
		}
		return "", fmt.Errorf("credential file %s is empty; put the API key in it", path)
	}
	if env != "" {
		return "", fmt.Errorf("credential not found: set the environment variable %s", env)
	}
	return "", errors.New("no credential configured: set an environment variable or a file")
}

// client sends one request and reads a whole, bounded, 2xx body. Anything else becomes an
// *Error naming where without the query string, with every secret scrubbed from the message.
type client struct {
	source  string
	http    *http.Client
	secrets []Secret
}

func (c client) do(ctx context.Context, req *http.Request) ([]byte, error) {
	where := redactURL(req.URL)
	hc := c.http
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req.WithContext(ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // *url.Error repeats the full URL, query and key included
		}
		return nil, &Error{Source: c.source, Where: where, Kind: KindNetwork, Err: c.scrub(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, &Error{Source: c.source, Where: where, Kind: KindDecode, Status: resp.StatusCode,
			Err: fmt.Errorf("reading body: %w", c.scrub(err))}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := statusError(c.source, where, resp, body)
		e.Err = c.scrub(e.Err)
		return nil, e
	}
	if len(body) > maxBody {
		return nil, &Error{Source: c.source, Where: where, Kind: KindDecode, Status: resp.StatusCode,
			Err: fmt.Errorf("response larger than %d bytes", maxBody)}
	}
	return body, nil
}

// decodeError wraps a body that could not be parsed.
func (c client) decodeError(where string, err error) error {
	return &Error{Source: c.source, Where: where, Kind: KindDecode, Err: c.scrub(err)}
}

// invalid wraps a body that parsed but holds data no catalog may contain.
func (c client) invalid(where string, err error) error {
	return &Error{Source: c.source, Where: where, Kind: KindInvalid, Err: err}
}

func (c client) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, s := range c.secrets {
		if s != "" {
			clean = strings.ReplaceAll(clean, s.Reveal(), "[redacted]")
			clean = strings.ReplaceAll(clean, url.QueryEscape(s.Reveal()), "[redacted]")
		}
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}

// redactURL is u without its query and credentials: where a request went, safe to print.
func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.User, c.Fragment = "", false, nil, ""
	return c.String()
}
