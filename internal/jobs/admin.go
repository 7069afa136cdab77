package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Job requests go to the arbiter on bus.JobAdminSubject(user, op): the server lets each NATS
// user publish only under its own token, so the user the arbiter records as the submitter is the
// authenticated one. One arbiter of a queue group answers each.
const (
	OpSubmit = "submit"
	OpCancel = "cancel"
	adminQue = "bursar-job-admin"
)

// Request is a submission (Workload, kind job) or a cancel (Name).
type Request struct {
	Workload *fleet.Workload `json:"workload,omitempty"`
	Name     string          `json:"name,omitempty"`
}

// Reply is the arbiter's answer: the job as stored, or why the request was refused.
type Reply struct {
	Job   *Spec  `json:"job,omitempty"`
	Error string `json:"error,omitempty"`
}

// Serve answers "arbiter job submit|cancel" on js's connection, checking each job against the
// fleet cfg and stamping it with now, until the subscription ends. Every arbiter serves them (one
// of a queue group answers each); the leader plans what the bucket holds.
func Serve(ctx context.Context, js jetstream.JetStream, cfg *fleet.Config, now func() time.Time,
	log *slog.Logger) (*nats.Subscription, error) {
	kv, err := js.KeyValue(ctx, bus.BucketJobs)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s (run bus.Ensure first): %w", bus.BucketJobs, err)
	}
	return KV{KV: kv}.Serve(ctx, js.Conn(), cfg, now, log)
}

// subjects are the subjects job requests are asked on (bus.JobAdminSubject).
var subjects = bus.AdminSubjects{Service: "job", Ops: []string{OpSubmit, OpCancel}}

// Serve answers job requests as the function Serve does, on the jobs bucket k and the
// connection nc: the arbiter's, which opened both already.
func (k KV) Serve(ctx context.Context, nc *nats.Conn, cfg *fleet.Config, now func() time.Time,
	log *slog.Logger) (*nats.Subscription, error) {
	return bus.Serve(ctx, nc, bus.Service{
		Name: "job request", Admin: &subjects, Queue: adminQue, Timeout: 10 * time.Second,
		Handle: func(ctx context.Context, r bus.Request) ([]byte, error) {
			spec, err := answer(ctx, k, cfg, now(), r)
			if err != nil {
				return nil, err
			}
			return json.Marshal(Reply{Job: spec})
		},
		Refuse: func(reply *nats.Msg, err error) {
			reply.Data, _ = json.Marshal(Reply{Error: err.Error()}) //nolint:errchkjson // plain fields always encode
		},
		Log: log,
	})
}

// answer applies one request at now: it returns the job a submission stored, nil for a cancel.
func answer(ctx context.Context, kv KV, cfg *fleet.Config, now time.Time, r bus.Request) (*Spec, error) {
	var req Request
	switch {
	case json.Unmarshal(r.Data, &req) != nil:
		return nil, fmt.Errorf("job request on %q: the body is not a job request", r.Subject)
	case r.Op == OpCancel:
		return nil, kv.cancel(ctx, req.Name)
	case req.Workload == nil:
		return nil, errors.New("a submission carries the job's workload")
	}
	if err := cfg.CheckJob(req.Workload); err != nil {
		return nil, err
	}
	spec := Spec{Workload: *req.Workload, SubmittedAt: now, By: r.User}
	created, err := kv.create(ctx, spec)
	switch {
	case err != nil:
		return nil, err
	case !created:
		return nil, fmt.Errorf("job %q is already submitted; cancel it first or choose another name", spec.Workload.Name)
	}
	return &spec, nil
}

// Client asks the arbiter to submit and cancel jobs, as one NATS user.
type Client struct{ c *bus.AdminClient }

// NewClient returns a client asking as user (the NATS identity the server lets publish on the
// user's job subject).
func NewClient(nc *nats.Conn, user string) (*Client, error) {
	c, err := subjects.Client(nc, user)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// Submit asks the arbiter to take job w.
func (c *Client) Submit(ctx context.Context, w fleet.Workload) (Spec, error) {
	r, err := c.ask(ctx, OpSubmit, Request{Workload: &w})
	if err != nil {
		return Spec{}, err
	}
	if r.Job == nil {
		return Spec{}, errors.New("the arbiter's answer holds no job")
	}
	return *r.Job, nil
}

// Cancel asks the arbiter to stop the job and mark it cancelled.
func (c *Client) Cancel(ctx context.Context, name string) error {
	_, err := c.ask(ctx, OpCancel, Request{Name: name})
	return err
}

func (c *Client) ask(ctx context.Context, op string, req Request) (Reply, error) {
	var r Reply
	if err := c.c.Ask(ctx, op, req, &r); err != nil {
		return Reply{}, fmt.Errorf("asking the arbiter: %w", err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}
