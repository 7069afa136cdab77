package fleet

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/yamlstrict"
)

// maxDeadlineIn bounds deadline_in, so that a job's deadline stays a time its events carry
// (before events.MaxTime).
const maxDeadlineIn = 10 * 365 * 24 * time.Hour

// Workload kinds.
const (
	KindServing = "serving" // the default: replicas kept up for traffic
	KindJob     = "job"     // one replica that runs until its work is done, by a deadline
)

// Job is what a workload of kind job needs beyond a serving workload's GPU, markets and
// residency: how much compute it takes, by when, and what each (re)launch costs. The deadline is
// either a time (DeadlineAt) or a duration from the job's submission (DeadlineIn), never both.
//
//   - name: finetune-7b
//     kind: job
//     gpu: {models: [H100-80GB], count: 1}
//     job: {work: 48h, deadline_in: 52h, overhead: 3m, priority: 1}
type Job struct {
	// Work is the compute the job needs on one replica, from start to finish.
	Work       time.Duration `yaml:"work"`
	DeadlineAt time.Time     `yaml:"deadline_at"`
	DeadlineIn time.Duration `yaml:"deadline_in"`
	// Overhead is the time each (re)launch loses before the job makes progress again (loading its
	// last checkpoint).
	Overhead time.Duration `yaml:"overhead"`
	// Priority orders jobs that compete for the same capacity: higher first.
	Priority int `yaml:"priority"`
}

// IsJob says whether w is a deadline-bound job rather than a serving workload.
func (w *Workload) IsJob() bool { return w.Kind == KindJob }

// Deadline is when a job submitted at submitted must be done.
func (j *Job) Deadline(submitted time.Time) time.Time {
	if !j.DeadlineAt.IsZero() {
		return j.DeadlineAt
	}
	return submitted.Add(j.DeadlineIn)
}

// checkKind checks the workload's kind, and for a job its job: settings and that it names no
// replica bounds or scaling (a job runs one replica).
func (w *Workload) checkKind(at func(...any) []any) error {
	switch w.Kind {
	case "", KindServing:
		if w.Job != nil {
			return fail("job: applies to kind: job only; add kind: job or remove it", at("job")...)
		}
		return nil
	case KindJob:
	default:
		return fail(fmt.Sprintf("unknown kind %q; want serving (the default) or job", w.Kind), at("kind")...)
	}
	switch {
	case w.Replicas != (Replicas{}):
		return fail("a job runs one replica; remove replicas:", at("replicas")...)
	case w.Scaling != (Scaling{}):
		return fail("a job is not scaled by demand; remove scaling:", at("scaling")...)
	case !w.Serving.isZero():
		return fail("a job serves no traffic; remove serving:", at("serving")...)
	case w.Job == nil:
		return fail("required for kind: job: work and deadline_at or deadline_in", at("job")...)
	}
	return w.Job.check(at)
}

func (j *Job) check(at func(...any) []any) error {
	switch {
	case j.Work <= 0:
		return fail("want the compute the job needs on one replica, more than 0 (e.g. 48h)", at("job", "work")...)
	case j.DeadlineAt.IsZero() == (j.DeadlineIn == 0):
		return fail("give exactly one of deadline_at (an RFC 3339 time) or deadline_in (a duration from submission)", at("job", "deadline_in")...)
	case j.DeadlineIn < 0:
		return fail("want a duration from submission, more than 0", at("job", "deadline_in")...)
	case j.DeadlineIn > maxDeadlineIn:
		return fail(fmt.Sprintf("want at most %s (10 years) from submission", maxDeadlineIn), at("job", "deadline_in")...)
	case !j.DeadlineAt.IsZero() && (j.DeadlineAt.Before(events.MinTime) || !j.DeadlineAt.Before(events.MaxTime)):
		return fail(fmt.Sprintf("want a time from %s to before %s (what a job's events carry), got %s",
			events.MinTime.Format(time.RFC3339), events.MaxTime.Format(time.RFC3339), j.DeadlineAt.Format(time.RFC3339)),
			at("job", "deadline_at")...)
	case j.DeadlineIn > 0 && j.DeadlineIn < j.Work:
		return fail(fmt.Sprintf("deadline_in %s is shorter than the work %s; the job cannot finish in time", j.DeadlineIn, j.Work),
			at("job", "deadline_in")...)
	case j.Overhead < 0:
		return fail("want a duration of 0 or more", at("job", "overhead")...)
	}
	return nil
}

// ParseJob reads a job file: one workload as bursar.yaml's workloads: hold them, kind job (the
// default here). With the fleet c it is checked as a workload of c (residency, GPU names,
// Kubernetes objects); with nil c only what it says alone is checked. name is used in errors.
func ParseJob(data []byte, name string, c *Config) (*Workload, error) {
	var w Workload
	if err := yamlstrict.Unmarshal(data, &w); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "the file is empty; want a job: name, gpu and job: {work, deadline_in}"}
		}
		return nil, yamlError(name, err)
	}
	if w.Kind == "" {
		w.Kind = KindJob
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	if err := checkJobIn(&w, c); err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			field := strings.TrimPrefix(strings.TrimPrefix(pe.field(), "workloads[0]"), ".")
			return nil, &Error{File: name, Line: yamlstrict.Line(&root, field), Field: field, Msg: pe.msg}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	return &w, nil
}

// CheckJob checks a job submitted to the fleet c: as a workload of c, of kind job, whose name no
// workload of c takes.
func (c *Config) CheckJob(w *Workload) error {
	if _, taken := c.Workload(w.Name); taken {
		return fmt.Errorf("job %q: a workload of bursar.yaml has that name; choose another", w.Name)
	}
	if err := checkJobIn(w, c); err != nil {
		return fmt.Errorf("job %q: %w", w.Name, err)
	}
	return nil
}

// CheckJobAlone checks what a job says alone, without the fleet it will run in: the arbiter
// checks the rest (residency, GPU names against its locations) when it is submitted.
func CheckJobAlone(w *Workload) error {
	if err := checkJobIn(w, nil); err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			return fmt.Errorf("job %q: %s: %s", w.Name, strings.TrimPrefix(strings.TrimPrefix(pe.field(), "workloads[0]"), "."), pe.msg)
		}
		return fmt.Errorf("job %q: %w", w.Name, err)
	}
	return nil
}

func checkJobIn(w *Workload, c *Config) error {
	if w.Kind != KindJob {
		return fail(fmt.Sprintf("want kind job, got %q", w.Kind), "workloads", 0, "kind")
	}
	if c == nil {
		c = &Config{Locations: []Location{{Name: "any"}}}
		w := *w
		w.Residency, w.MinLocations = nil, 0
		return w.check(0, c)
	}
	return w.check(0, c)
}
