package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// AdminClient asks an admin service as one NATS user.
type AdminClient struct {
	nc       *nats.Conn
	subjects AdminSubjects
	user     string
}

// Client returns a client asking on a's subjects as user, the NATS identity nc authenticated as:
// the server refuses its requests on any other user's subject.
func (a AdminSubjects) Client(nc *nats.Conn, user string) (*AdminClient, error) {
	if err := a.CheckUser(user); err != nil {
		return nil, err
	}
	return &AdminClient{nc: nc, subjects: a, user: user}, nil
}

// User is the identity the service records for this client's requests.
func (c *AdminClient) User() string { return c.user }

// Subject is where this client asks for op.
func (c *AdminClient) Subject(op string) string { return c.subjects.Subject(c.user, op) }

// Ask asks for op with req, encoded as JSON, and decodes the answer into reply. Its errors are
// Ask's.
func (c *AdminClient) Ask(ctx context.Context, op string, req, reply any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding the %s request: %w", c.subjects.Service, err)
	}
	subject := c.Subject(op)
	out, err := Ask(ctx, c.nc, subject, data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, reply); err != nil {
		return fmt.Errorf("decoding the answer on %s: %w", subject, err)
	}
	return nil
}

// A ReplyError is a refusal a service sent in the HeaderError header.
type ReplyError struct{ Reason string }

func (e *ReplyError) Error() string { return e.Reason }

// askTimeout bounds Ask where ctx has no deadline.
const askTimeout = 30 * time.Second

// Ask sends data on subject and returns the answer, its chunks joined, waiting at most until
// ctx's deadline (30 s without one). It flushes after the publish, so a publish the server
// refuses (a subject the connection's user may not ask on) is an error wrapping
// nats.ErrPermissionViolation at once, not a timeout; no subscriber on subject is one wrapping
// nats.ErrNoResponders; a refusal in the HeaderError header is a *ReplyError.
func Ask(ctx context.Context, nc *nats.Conn, subject string, data []byte) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, askTimeout)
		defer cancel()
	}
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("asking on %s: %w", subject, err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // nothing more arrives on the inbox
	before := nc.LastError()
	if err := nc.PublishRequest(subject, inbox, data); err != nil {
		return nil, fmt.Errorf("asking on %s: %w", subject, err)
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return nil, fmt.Errorf("asking on %s: %w", subject, err)
	}
	if err := nc.LastError(); err != nil && err != before && errors.Is(err, nats.ErrPermissionViolation) && //nolint:errorlint // a new error, not the one before
		strings.Contains(err.Error(), subject) {
		return nil, fmt.Errorf("the NATS server refused a request on %s: this connection's user may not ask there: %w", subject, err)
	}
	return answerOn(ctx, sub, subject)
}

// answerOn gathers the chunks of the answer to a request on subject.
func answerOn(ctx context.Context, sub *nats.Subscription, subject string) ([]byte, error) {
	var out []byte
	for {
		m, err := sub.NextMsgWithContext(ctx)
		switch {
		case errors.Is(err, nats.ErrNoResponders) || err == nil && len(m.Data) == 0 && m.Header.Get("Status") == "503":
			return nil, fmt.Errorf("nobody answers on %s (is \"arbiter run\" up?): %w", subject, nats.ErrNoResponders)
		case err != nil:
			return nil, fmt.Errorf("waiting for the answer on %s (is \"arbiter run\" up?): %w", subject, err)
		case m.Header.Get(HeaderError) != "":
			return nil, &ReplyError{Reason: m.Header.Get(HeaderError)}
		}
		out = append(out, m.Data...)
		if m.Header.Get(HeaderMore) == "" {
			return out, nil
		}
	}
}
