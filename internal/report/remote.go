package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
)

// QuerySubject is where the owner of the embedded store runs reports for others: a caller names
// a report and sends its typed parameters (a Request), never SQL.
const QuerySubject = "bursar.query.store"

const (
	headerError = "Bursar-Error" // the query failed; the value says why
	headerMore  = "Bursar-More"  // more chunks of the result follow
)

// ownerInfo is the owner's answer to an info request.
type ownerInfo struct {
	Owner string `json:"owner"`
}

// Serve runs the reports callers request on QuerySubject over st until ctx ends: the owner of
// the embedded store (arbiter run) runs it, so reports work while it holds the data directory.
// Requests are decoded and validated by DecodeRequest; results larger than a NATS message go
// back in chunks.
func Serve(ctx context.Context, nc *nats.Conn, st Querier, owner string, log *slog.Logger) error {
	sem := make(chan struct{}, 4) // queries at once; the rest wait in NATS's buffer
	sub, err := nc.Subscribe(QuerySubject, func(m *nats.Msg) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		go func() {
			defer func() { <-sem }()
			answer(ctx, nc, m, st, owner, log)
		}()
	})
	if err != nil {
		return fmt.Errorf("serving report queries on %s: %w", QuerySubject, err)
	}
	log.Info("answering report queries", "subject", QuerySubject)
	<-ctx.Done()
	return sub.Drain()
}

func answer(ctx context.Context, nc *nats.Conn, m *nats.Msg, st Querier, owner string, log *slog.Logger) {
	req, err := DecodeRequest(m.Data)
	if err != nil {
		log.Debug("refused a report request", "err", err)
		replyError(m, err.Error())
		return
	}
	if req.Info {
		b, _ := json.Marshal(ownerInfo{Owner: owner})
		_ = m.Respond(b)
		return
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	res, err := Run(qctx, st, req)
	if err == nil {
		var out []byte
		if out, err = encodeResult(res); err == nil {
			respond(nc, m, out, log)
			return
		}
	}
	log.Debug("report request failed", "report", req.Report, "err", err)
	replyError(m, err.Error())
}

// respond sends out to m's reply subject in chunks that fit a NATS message.
func respond(nc *nats.Conn, m *nats.Msg, out []byte, log *slog.Logger) {
	chunk := int(nc.MaxPayload()) - 4096
	for {
		reply := nats.NewMsg(m.Reply)
		n := min(len(out), chunk)
		reply.Data = out[:n]
		out = out[n:]
		if len(out) > 0 {
			reply.Header.Set(headerMore, "1")
		}
		if err := nc.PublishMsg(reply); err != nil {
			log.Warn("answering a report request", "err", err)
			return
		}
		if len(out) == 0 {
			return
		}
	}
}

func replyError(m *nats.Msg, msg string) {
	r := nats.NewMsg(m.Reply)
	r.Header.Set(headerError, msg)
	_ = m.RespondMsg(r)
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
	m, err := nc.RequestWithContext(ctx, QuerySubject, b)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			return nil, fmt.Errorf("%w on %s: %v", ErrNoOwner, QuerySubject, err)
		}
		return nil, fmt.Errorf("asking for the store's owner on %s: %w", QuerySubject, err)
	}
	var in ownerInfo
	if err := json.Unmarshal(m.Data, &in); err != nil {
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

// request sends b to the owner and gathers the answer's chunks.
func (c *Client) request(ctx context.Context, b []byte) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
	}
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("asking the store's owner for a report: %w", err)
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishRequest(QuerySubject, inbox, b); err != nil {
		return nil, fmt.Errorf("asking the store's owner for a report: %w", err)
	}
	var out []byte
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("waiting for %s to answer a report request: %w", c.owner, err)
		}
		if e := m.Header.Get(headerError); e != "" {
			return nil, fmt.Errorf("%s: %s", c.owner, e)
		}
		out = append(out, m.Data...)
		if m.Header.Get(headerMore) == "" {
			return out, nil
		}
	}
}
