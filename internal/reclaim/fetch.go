package reclaim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bursar-dev/bursar/internal/redact"
)

// maxBody bounds what a metadata service may send; its documents are a few hundred bytes.
const maxBody = 1 << 20

// request is one call to a metadata service.
type request struct {
	method  string
	url     string
	header  http.Header
	body    []byte
	timeout time.Duration
}

// response is a metadata service's answer: a 2xx body and its headers.
type response struct {
	body   []byte
	header http.Header
}

// fetch performs r with its own deadline. A 404 is errNotFound; any other non-2xx status is an
// *errStatus; the body is read whole (bounded by maxBody). Its errors name the URL redacted:
// an endpoint from the config may carry a password or a token.
func fetch(ctx context.Context, c *http.Client, r request) (response, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	where := redact.URL(r.url)
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return response{}, fmt.Errorf("building request %s %s: %w", r.method, where, redact.Error(err))
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: %w", r.method, where, redact.Error(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return response{}, fmt.Errorf("reading %s: %w", where, redact.Error(err))
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return response{}, errNotFound
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return response{}, &errStatus{url: where, code: resp.StatusCode}
	}
	return response{body: b, header: resp.Header}, nil
}
