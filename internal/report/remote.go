package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// QuerySubject is where the owner of the embedded store answers read-only queries.
const QuerySubject = "bursar.query.store"

const (
	headerError = "Bursar-Error" // the query failed; the value says why
	headerMore  = "Bursar-More"  // more chunks of the result follow
)

// queryRequest is one request to the owner: Info asks who it is and how to name tables.
type queryRequest struct {
	SQL  string `json:"sql,omitempty"`
	Info bool   `json:"info,omitempty"`
}

// ownerInfo is the owner's answer to an info request.
type ownerInfo struct {
	Owner  string            `json:"owner"`
	Tables map[string]string `json:"tables"`
}

// tables are the tables reports and dashboards read.
var tables = []string{"price_observed", "capacity_reclaimed", "gpu_sample", "tokens_sample", "replica_state",
	"plan_decided", "action_updated", "budget_alert", "cost_hourly", "tokens_hourly", "replica_latest"}

// ReadOnly checks that sql is a single SELECT (or WITH ... SELECT), which is all the query
// service runs for others.
func ReadOnly(sql string) error {
	s := strings.TrimSpace(sql)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	low := strings.ToLower(s)
	if !strings.HasPrefix(low, "select") && !strings.HasPrefix(low, "with") {
		return errors.New("only SELECT queries are answered")
	}
	if strings.Contains(s, ";") {
		return errors.New("one statement per query")
	}
	return nil
}

// Serve answers read-only queries on QuerySubject from st until ctx ends: the owner of the
// embedded store (arbiter run) runs it, so reports work while it holds the data directory.
// Results larger than a NATS message go back in chunks.
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
	var req queryRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		replyError(m, "decoding the request: "+err.Error())
		return
	}
	if req.Info {
		in := ownerInfo{Owner: owner, Tables: map[string]string{}}
		for _, t := range tables {
			in.Tables[t] = st.Table(t)
		}
		b, _ := json.Marshal(in)
		_ = m.Respond(b)
		return
	}
	if err := ReadOnly(req.SQL); err != nil {
		replyError(m, err.Error())
		return
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out, err := st.Query(qctx, req.SQL)
	if err != nil {
		log.Debug("report query failed", "err", err)
		replyError(m, err.Error())
		return
	}
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
			log.Warn("answering a report query", "err", err)
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

// ErrNoOwner says nobody answers queries on QuerySubject.
var ErrNoOwner = errors.New("no store owner answers report queries")

// Client queries the store through its owner over NATS.
type Client struct {
	nc     *nats.Conn
	owner  string
	tables map[string]string
}

var _ Querier = (*Client)(nil)

// Dial asks who owns the store; it returns ErrNoOwner when nobody answers within ctx.
func Dial(ctx context.Context, nc *nats.Conn) (*Client, error) {
	b, _ := json.Marshal(queryRequest{Info: true})
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
	return &Client{nc: nc, owner: in.Owner, tables: in.Tables}, nil
}

// Owner describes the process that answers.
func (c *Client) Owner() string { return c.owner }

// Table names a table as the owner's store names it.
func (c *Client) Table(name string) string {
	if t, ok := c.tables[name]; ok {
		return t
	}
	return "`" + name + "`"
}

// Query runs a SELECT at the owner and gathers the result's chunks.
func (c *Client) Query(ctx context.Context, sql string) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
	}
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("querying the store's owner: %w", err)
	}
	defer sub.Unsubscribe()
	b, _ := json.Marshal(queryRequest{SQL: sql})
	if err := c.nc.PublishRequest(QuerySubject, inbox, b); err != nil {
		return nil, fmt.Errorf("querying the store's owner: %w", err)
	}
	var out []byte
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("waiting for %s to answer a query: %w", c.owner, err)
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
