package pricesource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Limits bound one HTTP request of a source, so that a provider that hangs, drips or floods
// cannot hold the collector: the whole fetch is bounded by the caller's context on top.
type Limits struct {
	HeaderTimeout time.Duration // request sent to response headers; default 30 s
	IdleTimeout   time.Duration // longest wait for the next body bytes; default 30 s
	MaxBody       int64         // bytes of one response body; default 64 MiB
}

// DefaultMaxBody bounds one response body; a GCP catalog page of 5,000 SKUs is about 10 MB and
// the decoders stream, so the cap guards against a runaway body, not against memory.
const DefaultMaxBody = 64 << 20

func (l Limits) orDefaults() Limits {
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = 30 * time.Second
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 30 * time.Second
	}
	if l.MaxBody <= 0 {
		l.MaxBody = DefaultMaxBody
	}
	return l
}

// StallError is a request that made no progress within its limit: no response headers, or no
// body bytes for IdleTimeout.
type StallError struct {
	Waiting string // "response headers" or "body data"
	After   time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("no %s within %s (the provider stalled)", e.Waiting, e.After)
}

// Timeout marks the error as a timeout for net-style checks.
func (e *StallError) Timeout() bool { return true }

// TooLargeError is a response body over the source's cap.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("response body larger than %d bytes; raise the source's body limit if this is real", e.Limit)
}

// guardedClient is the HTTP client every source's requests go through, the AWS SDK's included
// (it satisfies aws.HTTPClient): it cancels a request whose headers or body stall and fails a
// body that grows past the cap.
type guardedClient struct {
	http   doer // nil: http.DefaultClient
	limits Limits
}

// doer is an HTTP client: *http.Client, or the AWS SDK's own (which honours AWS_CA_BUNDLE).
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

func (g guardedClient) Do(req *http.Request) (*http.Response, error) {
	var hc doer = http.DefaultClient
	if g.http != nil {
		hc = g.http
	}
	lim := g.limits.orDefaults()
	ctx, cancel := context.WithCancelCause(req.Context())
	req, err := detachBody(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	w := &watchdog{cancel: cancel}
	w.arm("response headers", lim.HeaderTimeout)
	resp, err := hc.Do(req)
	if err != nil {
		w.stop()
		err = causeOf(ctx, err)
		cancel(nil)
		return nil, err
	}
	w.arm("body data", lim.IdleTimeout)
	resp.Body = &guardedBody{rc: resp.Body, ctx: ctx, cancel: cancel, w: w, idle: lim.IdleTimeout, left: lim.MaxBody, limit: lim.MaxBody}
	return resp, nil
}

// detachBody gives req a request body of its own. The AWS SDK closes its request body as soon
// as Do returns, while the transport may still read it to EOF; that read then fails and the
// transport closes the connection under the response being read. Request bodies here are
// small (a form, a filter), so a copy costs nothing.
func detachBody(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	b, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.ContentLength = int64(len(b))
	return req, nil
}

// causeOf is err, or why ctx ended when it did: a stall, or the caller's own deadline cause.
func causeOf(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return err
}

// watchdog cancels a request when its timer runs out; each sign of progress re-arms it.
type watchdog struct {
	mu     sync.Mutex
	t      *time.Timer
	cancel context.CancelCauseFunc
}

func (w *watchdog) arm(waiting string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Stop()
	}
	w.t = time.AfterFunc(d, func() { w.cancel(&StallError{Waiting: waiting, After: d}) })
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Stop()
	}
}

// guardedBody counts what is read against the cap and re-arms the watchdog on every byte.
type guardedBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	w      *watchdog
	idle   time.Duration
	left   int64 // bytes still allowed
	limit  int64
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &TooLargeError{Limit: b.limit}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the cap tells a body at the cap from one over it
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.arm("body data", b.idle)
	}
	b.left -= int64(n)
	if b.left < 0 {
		return n - 1, &TooLargeError{Limit: b.limit}
	}
	if err != nil && err != io.EOF {
		err = causeOf(b.ctx, err)
	}
	return n, err
}

func (b *guardedBody) Close() error {
	b.w.stop()
	b.cancel(nil)
	return b.rc.Close()
}

// transportKind classifies the failures guardedClient and the caller's context produce.
func transportKind(err error) (Kind, bool) {
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return KindTooLarge, true
	}
	var st *StallError
	if errors.As(err, &st) || errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout, true
	}
	return "", false
}
