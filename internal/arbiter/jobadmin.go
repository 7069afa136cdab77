package arbiter

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
	JobSubmit   = "submit"
	JobCancel   = "cancel"
	jobAdminQue = "bursar-job-admin"
)

// JobRequest is a submission (Workload, kind job) or a cancel (Name).
type JobRequest struct {
	Workload *fleet.Workload `json:"workload,omitempty"`
	Name     string          `json:"name,omitempty"`
}

// JobReply is the arbiter's answer: the job as stored, or why the request was refused.
type JobReply struct {
	Job   *JobSpec `json:"job,omitempty"`
	Error string   `json:"error,omitempty"`
}

// ServeJobRequests answers "arbiter job submit|cancel" on js's connection, checking each job
// against the fleet cfg and stamping it with now, until the subscription ends. Every arbiter
// serves them (one of a queue group answers each); the leader plans what the bucket holds.
func ServeJobRequests(ctx context.Context, js jetstream.JetStream, cfg *fleet.Config, now func() time.Time,
	log *slog.Logger) (*nats.Subscription, error) {
	kv, err := js.KeyValue(ctx, bus.BucketJobs)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s (run bus.Ensure first): %w", bus.BucketJobs, err)
	}
	return serveJobs(ctx, js.Conn(), jobKV{kv: kv}, cfg, now, log)
}

// jobSubjects are the subjects job requests are asked on (bus.JobAdminSubject).
var jobSubjects = bus.AdminSubjects{Service: "job", Ops: []string{JobSubmit, JobCancel}}

func serveJobs(ctx context.Context, nc *nats.Conn, kv jobKV, cfg *fleet.Config, now func() time.Time,
	log *slog.Logger) (*nats.Subscription, error) {
	return bus.Serve(ctx, nc, bus.Service{
		Name: "job request", Admin: &jobSubjects, Queue: jobAdminQue, Timeout: 10 * time.Second,
		Handle: func(ctx context.Context, r bus.Request) ([]byte, error) {
			spec, err := answerJob(ctx, kv, cfg, now(), r)
			if err != nil {
				return nil, err
			}
			return json.Marshal(JobReply{Job: spec})
		},
		Refuse: func(reply *nats.Msg, err error) {
			reply.Data, _ = json.Marshal(JobReply{Error: err.Error()}) //nolint:errchkjson // plain fields always encode
		},
		Log: log,
	})
}

// answerJob applies one request at now: it returns the job a submission stored, nil for a cancel.
func answerJob(ctx context.Context, kv jobKV, cfg *fleet.Config, now time.Time, r bus.Request) (*JobSpec, error) {
	var req JobRequest
	switch {
	case json.Unmarshal(r.Data, &req) != nil:
		return nil, fmt.Errorf("job request on %q: the body is not a job request", r.Subject)
	case r.Op == JobCancel:
		return nil, kv.cancel(ctx, req.Name)
	case req.Workload == nil:
		return nil, errors.New("a submission carries the job's workload")
	}
	if err := cfg.CheckJob(req.Workload); err != nil {
		return nil, err
	}
	spec := JobSpec{Workload: *req.Workload, SubmittedAt: now, By: r.User}
	created, err := kv.create(ctx, spec)
	switch {
	case err != nil:
		return nil, err
	case !created:
		return nil, fmt.Errorf("job %q is already submitted; cancel it first or choose another name", spec.Workload.Name)
	}
	return &spec, nil
}

// JobClient asks the arbiter to submit and cancel jobs, as one NATS user.
type JobClient struct{ c *bus.AdminClient }

// NewJobClient returns a client asking as user (the NATS identity the server lets publish on
// the user's job subject).
func NewJobClient(nc *nats.Conn, user string) (*JobClient, error) {
	c, err := jobSubjects.Client(nc, user)
	if err != nil {
		return nil, err
	}
	return &JobClient{c}, nil
}

// Submit asks the arbiter to take job w.
func (c *JobClient) Submit(ctx context.Context, w fleet.Workload) (JobSpec, error) {
	r, err := c.ask(ctx, JobSubmit, JobRequest{Workload: &w})
	if err != nil {
		return JobSpec{}, err
	}
	if r.Job == nil {
		return JobSpec{}, errors.New("the arbiter's answer holds no job")
	}
	return *r.Job, nil
}

// Cancel asks the arbiter to stop the job and mark it cancelled.
func (c *JobClient) Cancel(ctx context.Context, name string) error {
	_, err := c.ask(ctx, JobCancel, JobRequest{Name: name})
	return err
}

func (c *JobClient) ask(ctx context.Context, op string, req JobRequest) (JobReply, error) {
	var r JobReply
	if err := c.c.Ask(ctx, op, req, &r); err != nil {
		return JobReply{}, fmt.Errorf("asking the arbiter: %w", err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}
