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

// client sends requests through guardedClient and hands back 2xx bodies, streamed or whole.
// Anything else becomes an *Error naming where without the query string, with every secret
// scrubbed from the message.
type client struct {
	source  string
	http    *http.Client
	limits  Limits
	secrets []Secret
}

// do reads a whole 2xx body, for the small answers of the neocloud APIs.
func (c client) do(ctx context.Context, req *http.Request) ([]byte, error) {
	var body []byte
	err := c.stream(ctx, req, func(r io.Reader) error {
		var err error
		body, err = io.ReadAll(r)
		return err
	})
	return body, err
}

// stream sends req and hands a 2xx body to decode as it arrives, so that a page is never held
// whole in memory. A failure of decode is a decode error unless the transport caused it (a
// stall, the body cap, the fetch's deadline).
func (c client) stream(ctx context.Context, req *http.Request, decode func(io.Reader) error) error {
	where := redactURL(req.URL)
	g := guardedClient{limits: c.limits}
	if c.http != nil {
		g.http = c.http
	}
	resp, err := g.Do(req.WithContext(ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // *url.Error repeats the full URL, query and key included
		}
		return c.transportError(where, 0, KindNetwork, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		e := statusError(c.source, where, resp, body)
		e.Err = c.scrub(e.Err)
		return e
	}
	if err := decode(resp.Body); err != nil {
		return c.transportError(where, resp.StatusCode, KindDecode, err)
	}
	return nil
}

// transportError is err as an *Error: a timeout or an oversized body when the transport says
// so, otherwise of kind def.
func (c client) transportError(where string, status int, def Kind, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	kind, ok := transportKind(err)
	if !ok {
		kind = def
	}
	return &Error{Source: c.source, Where: where, Kind: kind, Status: status, Err: c.scrub(err)}
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
