package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
)

// QuerySubject is where the owner of the embedded store runs reports for others: a caller names
// a report and sends its typed parameters (a Request), never SQL.
const QuerySubject = "bursar.query.store"

// ownerInfo is the owner's answer to an info request.
type ownerInfo struct {
	Owner string `json:"owner"`
}

// Serve runs the reports callers request on QuerySubject over st until ctx ends: the owner of
// the embedded store (arbiter run) runs it, so reports work while it holds the data directory.
// Requests are decoded and validated by DecodeRequest, four run at once (the rest wait in NATS's
// buffer), and results larger than a NATS message go back in chunks (bus.Serve).
func Serve(ctx context.Context, nc *nats.Conn, st Querier, owner string, log *slog.Logger) error {
	sub, err := bus.Serve(ctx, nc, bus.Service{
		Name: "report request", Subject: QuerySubject, Timeout: bus.QueryAnswerTime, Workers: 4,
		Handle: func(ctx context.Context, r bus.Request) ([]byte, error) { return answer(ctx, st, owner, r.Data) },
		Log:    log,
	})
	if err != nil {
		return err
	}
	log.Info("answering report queries", "subject", QuerySubject)
	<-ctx.Done()
	return sub.Drain()
}

// answer runs the report request data names, or says who owns the store for an info request.
func answer(ctx context.Context, st Querier, owner string, data []byte) ([]byte, error) {
	req, err := DecodeRequest(data)
	switch {
	case err != nil:
		return nil, err
	case req.Info:
		return json.Marshal(ownerInfo{Owner: owner})
	}
	res, err := Run(ctx, st, req)
	if err != nil {
		return nil, err
	}
	return encodeResult(res)
}

// ErrNoOwner says nobody answers report requests on QuerySubject.
var ErrNoOwner = errors.New("no store owner answers report queries")

// Client runs reports at the store's owner over NATS.
type Client struct {
	nc    *nats.Conn
	owner string
}

var _ Reporter = (*Client)(nil)

// Dial asks who owns the store; it returns ErrNoOwner when nobody answers within ctx.
func Dial(ctx context.Context, nc *nats.Conn) (*Client, error) {
	b, _ := json.Marshal(Request{Info: true})
	out, err := bus.Ask(ctx, nc, QuerySubject, b)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: %v", ErrNoOwner, err)
		}
		return nil, fmt.Errorf("asking for the store's owner: %w", err)
	}
	var in ownerInfo
	if err := json.Unmarshal(out, &in); err != nil {
		return nil, fmt.Errorf("decoding the store owner's answer: %w", err)
	}
	return &Client{nc: nc, owner: in.Owner}, nil
}

// Owner describes the process that answers.
func (c *Client) Owner() string { return c.owner }

// Run runs r at the owner and gathers the result's chunks.
func (c *Client) Run(ctx context.Context, r Request) (*Result, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encoding the report request: %w", err)
	}
	out, err := c.request(ctx, b)
	if err != nil {
		return nil, err
	}
	return decodeResult(out)
}

// request sends b to the owner and returns the answer, its chunks joined.
func (c *Client) request(ctx context.Context, b []byte) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, bus.QueryAnswerTime)
		defer cancel()
	}
	out, err := bus.Ask(ctx, c.nc, QuerySubject, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.owner, err)
	}
	return out, nil
}
