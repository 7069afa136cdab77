package arbiter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	return serveJobs(ctx, js.Conn(), jobKV{kv}, cfg, now, log)
}

func serveJobs(ctx context.Context, nc *nats.Conn, kv jobKV, cfg *fleet.Config, now func() time.Time,
	log *slog.Logger) (*nats.Subscription, error) {
	sub, err := nc.QueueSubscribe(bus.JobAdminSubject("*", "*"), jobAdminQue, func(m *nats.Msg) {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r := answerJob(rctx, kv, cfg, now(), m.Subject, m.Data)
		if r.Error != "" {
			log.Info("job request refused", "subject", m.Subject, "err", r.Error)
		}
		data, _ := json.Marshal(r) //nolint:errchkjson // plain fields always encode
		_ = m.Respond(data)
	})
	if err != nil {
		return nil, fmt.Errorf("serving job requests: %w", err)
	}
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("serving job requests: %w", err)
	}
	return sub, nil
}

// answerJob applies one request asked on subject at now.
func answerJob(ctx context.Context, kv jobKV, cfg *fleet.Config, now time.Time, subject string, data []byte) JobReply {
	user, op, ok := parseJobSubject(subject)
	var req JobRequest
	switch {
	case !ok:
		return JobReply{Error: fmt.Sprintf("job request on %q: want %s", subject, bus.JobAdminSubject("USER", "submit|cancel"))}
	case json.Unmarshal(data, &req) != nil:
		return JobReply{Error: fmt.Sprintf("job request on %q: the body is not a job request", subject)}
	case op == JobCancel:
		if err := kv.cancel(ctx, req.Name); err != nil {
			return JobReply{Error: err.Error()}
		}
		return JobReply{}
	case req.Workload == nil:
		return JobReply{Error: "a submission carries the job's workload"}
	}
	if err := cfg.CheckJob(req.Workload); err != nil {
		return JobReply{Error: err.Error()}
	}
	spec := JobSpec{Workload: *req.Workload, SubmittedAt: now, By: user}
	created, err := kv.create(ctx, spec)
	switch {
	case err != nil:
		return JobReply{Error: err.Error()}
	case !created:
		return JobReply{Error: fmt.Sprintf("job %q is already submitted; cancel it first or choose another name", spec.Workload.Name)}
	}
	return JobReply{Job: &spec}
}

// parseJobSubject splits bursar.admin.job.<user>.<op>.
func parseJobSubject(subject string) (user, op string, ok bool) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || t[0] != "bursar" || t[1] != "admin" || t[2] != "job" || (t[4] != JobSubmit && t[4] != JobCancel) {
		return "", "", false
	}
	return t[3], t[4], true
}

// JobClient asks the arbiter to submit and cancel jobs, as one NATS user.
type JobClient struct {
	nc   *nats.Conn
	user string
}

// NewJobClient returns a client asking as user (the NATS identity the server lets publish on
// the user's job subject).
func NewJobClient(nc *nats.Conn, user string) (*JobClient, error) {
	if user == "" || strings.ContainsAny(user, ".*> \t\r\n") {
		return nil, fmt.Errorf("NATS user %q cannot name a job subject: use a user name without dots, spaces, '*' or '>'", user)
	}
	return &JobClient{nc: nc, user: user}, nil
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
	data, err := json.Marshal(req)
	if err != nil {
		return JobReply{}, fmt.Errorf("encoding the job request: %w", err)
	}
	subject := bus.JobAdminSubject(c.user, op)
	m, err := c.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return JobReply{}, fmt.Errorf("asking the arbiter on %s: %w (is \"arbiter run\" up?)", subject, err)
	}
	var r JobReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return JobReply{}, fmt.Errorf("decoding the arbiter's answer on %s: %w", subject, err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}
