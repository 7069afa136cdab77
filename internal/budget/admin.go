package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

// adminSubjects are the subjects budget writes are asked on (bus.BudgetAdminSubject).
var adminSubjects = bus.AdminSubjects{Service: "budget", Ops: []string{opSet, opDelete}}

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
	return bus.Serve(ctx, nc, bus.Service{
		Name: "budget write", Admin: &adminSubjects, Queue: adminQueue, Timeout: 10 * time.Second,
		Handle: func(ctx context.Context, r bus.Request) ([]byte, error) {
			return c.write(ctx, s, r.Subject, r.Data, now())
		},
		Refuse: refuseWrite, Log: log,
	})
}

// write applies one write asked on subject at at, and answers with the stored revision and the
// warnings of a policy set.
func (c adminConfig) write(ctx context.Context, s *Store, subject string, data []byte, at time.Time) ([]byte, error) {
	actor, op, req, err := decodeAdmin(subject, data)
	if err != nil {
		return nil, err
	}
	var r adminReply
	if op == opSet {
		r.Revision, err = s.Put(ctx, *req.Policy, actor, at)
	} else {
		r.Revision, err = s.Delete(ctx, req.Name, actor, at)
	}
	if err != nil {
		return nil, err
	}
	if op == opSet && c.fleet != nil {
		if cfg := c.fleet(); cfg != nil {
			r.Warnings = Warnings(*req.Policy, cfg)
		}
	}
	return json.Marshal(r)
}

// refuseWrite answers a refused write with why, in the reply's body.
func refuseWrite(reply *nats.Msg, err error) {
	reply.Data, _ = json.Marshal(adminReply{Error: err.Error(), NotFound: errors.Is(err, ErrNotFound)}) //nolint:errchkjson // plain fields always encode
}

// decodeAdmin reads a write request: the actor and operation from its subject, what to write
// from its body. A set carries a policy, a delete a name.
func decodeAdmin(subject string, data []byte) (actor, op string, req adminRequest, err error) {
	actor, op, err = adminSubjects.Parse(subject)
	if err != nil {
		return "", "", req, err
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return "", "", req, fmt.Errorf("budget write on %q: decoding the request: %w", subject, err)
	}
	if (op == opSet) != (req.Policy != nil) || (op == opDelete) != (req.Name != "") {
		return "", "", req, fmt.Errorf("budget write on %q: a set carries only a policy, a delete only a name", subject)
	}
	return actor, op, req, nil
}

// Admin asks the arbiter to write budgets, as one NATS user.
type Admin struct{ c *bus.AdminClient }

// NewAdmin returns a client writing as user, the NATS identity nc authenticated as: the server
// refuses its requests on any other user's subject.
func NewAdmin(nc *nats.Conn, user string) (*Admin, error) {
	c, err := adminSubjects.Client(nc, user)
	if err != nil {
		return nil, err
	}
	return &Admin{c}, nil
}

// User is the identity the arbiter will record for this client's changes.
func (a *Admin) User() string { return a.c.User() }

// Put asks the arbiter to store p; it is validated here first, for the error's sake. It returns
// the stored revision and what the arbiter warns of in p (a scope that matches no workload of its
// fleet file): p is stored all the same.
func (a *Admin) Put(ctx context.Context, p Policy) (uint64, []string, error) {
	p.Normalize()
	if err := p.Validate(); err != nil {
		return 0, nil, err
	}
	r, err := a.ask(ctx, opSet, adminRequest{Policy: &p})
	return r.Revision, r.Warnings, err
}

// Delete asks the arbiter to mark the policy deleted.
func (a *Admin) Delete(ctx context.Context, name string) (uint64, error) {
	r, err := a.ask(ctx, opDelete, adminRequest{Name: name})
	return r.Revision, err
}

// ask asks the arbiter for op, saying what to do when the server refuses the subject (another
// user's) or no arbiter answers.
func (a *Admin) ask(ctx context.Context, op string, req adminRequest) (adminReply, error) {
	var r adminReply
	err := a.c.Ask(ctx, op, req, &r)
	switch {
	case errors.Is(err, nats.ErrPermissionViolation):
		return adminReply{}, fmt.Errorf("the NATS server refused %q a budget write on %s: each user may ask only on "+
			"bursar.admin.budget.<its user>.>, so connect as your own NATS user (--nats-user, --nats-creds) "+
			"and give its name with --nats-identity if it is not the user name", a.c.User(), a.c.Subject(op))
	case errors.Is(err, nats.ErrNoResponders):
		return adminReply{}, fmt.Errorf("no arbiter answers budget writes on %s: is \"arbiter run\" up?", a.c.Subject(op))
	case err != nil:
		return adminReply{}, fmt.Errorf("asking the arbiter for a budget write: %w", err)
	case r.NotFound:
		return adminReply{}, fmt.Errorf("%s: %w", r.Error, ErrNotFound)
	case r.Error != "":
		return adminReply{}, errors.New(r.Error)
	}
	return r, nil
}
