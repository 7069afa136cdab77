package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Budget writes go through the arbiter as requests on bus.BudgetAdminSubject(user, op). The
// server lets each NATS user publish only under its own user token, so the token the arbiter
// reads from the subject is the authenticated identity: it is the actor the history records.
const (
	opSet    = "set"
	opDelete = "delete"
	// adminQueue makes one arbiter answer each write when several run.
	adminQueue = "bursar-budget-admin"
)

// adminRequest is a budget write: a policy to set, or the name of one to delete.
type adminRequest struct {
	Policy *Policy `json:"policy,omitempty"`
	Name   string  `json:"name,omitempty"`
}

// adminReply is the arbiter's answer: the stored revision and what the arbiter warns of in the
// policy (Warnings against its fleet file), or why the write was refused.
type adminReply struct {
	Revision uint64   `json:"revision,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
	NotFound bool     `json:"not_found,omitempty"`
}

// AdminOption configures ServeAdmin.
type AdminOption func(*adminConfig)

type adminConfig struct {
	fleet func() *fleet.Config
}

// WithFleet has ServeAdmin check each policy set against the fleet file cfg returns (nil: none)
// and answer the writer with the warnings (a scope that matches no workload), so the person who
// set it learns of them, not only the arbiter's log.
func WithFleet(cfg func() *fleet.Config) AdminOption {
	return func(c *adminConfig) { c.fleet = cfg }
}

// ServeAdmin answers budget writes, storing each in s with the actor taken from the request's
// subject and the time from now, until the returned subscription is unsubscribed or ctx ends.
// It returns once the server knows of the subscription. Only the arbiter may write the budget
// bucket, so this is the one way a change gets in.
func ServeAdmin(ctx context.Context, nc *nats.Conn, s *Store, now func() time.Time, log *slog.Logger,
	opts ...AdminOption) (*nats.Subscription, error) {
	var c adminConfig
	for _, o := range opts {
		o(&c)
	}
	sub, err := nc.QueueSubscribe(bus.BudgetAdminSubject("*", "*"), adminQueue, func(m *nats.Msg) {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r := serveOne(rctx, s, m.Subject, m.Data, now())
		if r.Error == "" && c.fleet != nil {
			r.Warnings = setWarnings(m.Subject, m.Data, c.fleet())
		}
		if r.Error != "" {
			log.Info("budget write refused", "subject", m.Subject, "err", r.Error)
		}
		data, _ := json.Marshal(r) //nolint:errchkjson // a struct of plain fields always encodes
		if err := m.Respond(data); err != nil {
			log.Warn("answering a budget write", "subject", m.Subject, "err", err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("serving budget writes: %w", err)
	}
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("serving budget writes: %w", err)
	}
	return sub, nil
}

// serveOne applies one write asked on subject.
func serveOne(ctx context.Context, s *Store, subject string, data []byte, at time.Time) adminReply {
	actor, op, req, err := decodeAdmin(subject, data)
	if err != nil {
		return adminReply{Error: err.Error()}
	}
	var rev uint64
	if op == opSet {
		rev, err = s.Put(ctx, *req.Policy, actor, at)
	} else {
		rev, err = s.Delete(ctx, req.Name, actor, at)
	}
	if err != nil {
		return adminReply{Error: err.Error(), NotFound: errors.Is(err, ErrNotFound)}
	}
	return adminReply{Revision: rev}
}

// setWarnings are Warnings for the policy a set request carries, against cfg; none for a
// delete or without a fleet file.
func setWarnings(subject string, data []byte, cfg *fleet.Config) []string {
	_, op, req, err := decodeAdmin(subject, data)
	if err != nil || op != opSet || cfg == nil {
		return nil
	}
	return Warnings(*req.Policy, cfg)
}

// decodeAdmin reads a write request: the actor and operation from its subject, what to write
// from its body. A set carries a policy, a delete a name.
func decodeAdmin(subject string, data []byte) (actor, op string, req adminRequest, err error) {
	actor, op, ok := parseAdminSubject(subject)
	if !ok {
		return "", "", req, fmt.Errorf("budget write on %q: want %s", subject, bus.BudgetAdminSubject("USER", "set|delete"))
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return "", "", req, fmt.Errorf("budget write on %q: decoding the request: %w", subject, err)
	}
	if (op == opSet) != (req.Policy != nil) || (op == opDelete) != (req.Name != "") {
		return "", "", req, fmt.Errorf("budget write on %q: a set carries only a policy, a delete only a name", subject)
	}
	return actor, op, req, nil
}

// parseAdminSubject splits bursar.admin.budget.<user>.<op> into the user and the operation.
func parseAdminSubject(subject string) (user, op string, ok bool) {
	tokens := strings.Split(subject, ".")
	if len(tokens) != 5 {
		return "", "", false
	}
	user, op = tokens[3], tokens[4]
	if user == "" || (op != opSet && op != opDelete) || subject != bus.BudgetAdminSubject(user, op) {
		return "", "", false
	}
	return user, op, true
}

// Admin asks the arbiter to write budgets, as one NATS user.
type Admin struct {
	nc   *nats.Conn
	user string
}

// NewAdmin returns a client writing as user, the NATS identity nc authenticated as: the server
// refuses its requests on any other user's subject.
func NewAdmin(nc *nats.Conn, user string) (*Admin, error) {
	if user == "" || strings.ContainsAny(user, ".*> \t\r\n") {
		return nil, fmt.Errorf("NATS user %q cannot name a budget subject: use a user name without dots, spaces, '*' or '>'", user)
	}
	return &Admin{nc: nc, user: user}, nil
}

// User is the identity the arbiter will record for this client's changes.
func (a *Admin) User() string { return a.user }

// Put asks the arbiter to store p; it is validated here first, for the error's sake. It returns
// the stored revision and what the arbiter warns of in p (a scope that matches no workload of its
// fleet file): p is stored all the same.
func (a *Admin) Put(ctx context.Context, p Policy) (uint64, []string, error) {
	p.Normalize()
	if err := p.Validate(); err != nil {
		return 0, nil, err
	}
	r, err := a.ask(ctx, opSet, adminRequest{Policy: &p}, p.Name)
	return r.Revision, r.Warnings, err
}

// Delete asks the arbiter to mark the policy deleted.
func (a *Admin) Delete(ctx context.Context, name string) (uint64, error) {
	r, err := a.ask(ctx, opDelete, adminRequest{Name: name}, name)
	return r.Revision, err
}

func (a *Admin) ask(ctx context.Context, op string, req adminRequest, name string) (adminReply, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return adminReply{}, fmt.Errorf("encoding budget policy %q: %w", name, err)
	}
	subject := bus.BudgetAdminSubject(a.user, op)
	m, err := a.request(ctx, subject, data)
	if err != nil {
		return adminReply{}, err
	}
	var r adminReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return adminReply{}, fmt.Errorf("decoding the arbiter's answer on %s: %w", subject, err)
	}
	switch {
	case r.NotFound:
		return adminReply{}, fmt.Errorf("%s: %w", r.Error, ErrNotFound)
	case r.Error != "":
		return adminReply{}, errors.New(r.Error)
	}
	return r, nil
}

// request sends data on subject and waits for the answer. It flushes after the publish, so a
// publish the server refuses (a subject of another user) is reported at once, not as a timeout:
// the server's error arrives before the flush's reply.
func (a *Admin) request(ctx context.Context, subject string, data []byte) (*nats.Msg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	inbox := a.nc.NewRespInbox()
	sub, err := a.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("asking the arbiter on %s: %w", subject, err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // the connection closes after the command
	if err := a.nc.PublishRequest(subject, inbox, data); err != nil {
		return nil, fmt.Errorf("asking the arbiter on %s: %w", subject, err)
	}
	if err := a.nc.FlushWithContext(ctx); err != nil {
		return nil, fmt.Errorf("asking the arbiter on %s: %w", subject, err)
	}
	if err := a.nc.LastError(); err != nil && strings.Contains(strings.ToLower(err.Error()), "permissions violation") &&
		strings.Contains(err.Error(), subject) {
		return nil, fmt.Errorf("the NATS server refused %q a budget write on %s: each user may ask only on "+
			"bursar.admin.budget.<its user>.>, so connect as your own NATS user (--nats-user, --nats-creds) "+
			"and give its name with --nats-identity if it is not the user name", a.user, subject)
	}
	m, err := sub.NextMsgWithContext(ctx)
	if errors.Is(err, nats.ErrNoResponders) || (err == nil && len(m.Data) == 0 && m.Header.Get("Status") == "503") {
		return nil, fmt.Errorf("no arbiter answers budget writes on %s: is \"arbiter run\" up?", subject)
	}
	if err != nil {
		return nil, fmt.Errorf("waiting for the arbiter's answer on %s: %w", subject, err)
	}
	return m, nil
}
