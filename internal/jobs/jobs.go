// Package jobs holds a deadline-bound job's records as the jobs bucket (bus.BucketJobs) keeps
// them, the reads and writes of that bucket, and the service that answers "arbiter job
// submit|cancel". The arbiter plans and accounts for the jobs, and alone writes their runs
// (fenced, as a book is written); the CLI reads them with Load and asks with a Client.
package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Spec is a job's submission as the jobs bucket holds it (key job.<name>): what to run, who
// submitted it and when (the deadline of a deadline_in job counts from then), and whether it was
// cancelled.
type Spec struct {
	Workload    fleet.Workload `json:"workload"`
	SubmittedAt time.Time      `json:"submitted_at"`
	By          string         `json:"by"`
	Cancelled   bool           `json:"cancelled,omitempty"`
}

// Deadline is when the job must be done.
func (j Spec) Deadline() time.Time { return j.Workload.Job.Deadline(j.SubmittedAt) }

// Run is the leader's running account of a job (key state.<name>): its state, the work done
// (checkpointed), what it cost and lost, and the instance whose progress is being counted.
type Run struct {
	State       events.JobStatus `json:"state"`
	Done        time.Duration    `json:"done"`
	CreditedAt  time.Time        `json:"credited_at,omitzero"` // Done counts work up to here
	ChargedAt   time.Time        `json:"charged_at,omitzero"`  // USDSpent counts up to here
	USDSpent    float64          `json:"usd_spent"`
	Preemptions int              `json:"preemptions"`
	Lost        time.Duration    `json:"lost"` // launches and checkpoint loads: billed, unproductive
	// Replica is the instance whose work is counted; ReadyAt when it was first seen ready.
	Replica  string        `json:"replica,omitempty"`
	ReadyAt  time.Time     `json:"ready_at,omitzero"`
	Location string        `json:"location,omitempty"`
	Market   events.Market `json:"market,omitempty"`
	Price    float64       `json:"usd_per_hour,omitempty"`
	// OnDemand is the cheapest on-demand price per hour among the job's offers at the last
	// decision: what the same work would cost on-demand, for reports of the saving.
	OnDemand   float64   `json:"on_demand_usd_per_hour,omitempty"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Reason     string    `json:"reason,omitempty"`
	// StartedAt is when the job's first instance was launched: no progress it reports can claim
	// more work than the time since (the arbiter's checkProgress).
	StartedAt time.Time `json:"started_at,omitzero"`
	// Epoch is the lease revision of the leader that wrote it, as a book's (arbiter.Book.Epoch).
	Epoch uint64 `json:"epoch,omitempty"`
}

// Ended says the job needs nothing more: finished, cancelled or failed.
func (r Run) Ended() bool {
	return r.State == events.JobFinished || r.State == events.JobCancelled || r.State == events.JobFailed
}

// Record is one job: its submission and its run.
type Record struct {
	Spec Spec `json:"spec"`
	Run  Run  `json:"run"`
}

// FromConfig are the jobs of bursar.yaml, with the time they count as submitted: now, unless the
// bucket already holds their submission (KV.EnsureSpec).
func FromConfig(cfg *fleet.Config, now time.Time) []Spec {
	var out []Spec
	for _, w := range cfg.Workloads {
		if w.IsJob() {
			out = append(out, Spec{Workload: w, SubmittedAt: now, By: "bursar.yaml"})
		}
	}
	return out
}

// SpecKey is the key of the job's submission in the jobs bucket.
func SpecKey(name string) string { return bus.JobSpecPrefix + events.Token(name) }

// StateKey is the key of the job's run in the jobs bucket.
func StateKey(name string) string { return bus.JobStatePrefix + events.Token(name) }

// errNotAJob says a jobs bucket value is not what its key holds.
var errNotAJob = errors.New("not a job")

// DecodeSpec reads the submission stored under key: one that does not decode, names no job, or
// names a job other than its key's is not a job (an error the arbiter reports as corruption).
func DecodeSpec(key string, data []byte) (Spec, error) {
	var j Spec
	if err := json.Unmarshal(data, &j); err != nil {
		return j, fmt.Errorf("%w: %w", errNotAJob, err)
	}
	if j.Workload.Job == nil || j.Workload.Name == "" {
		return j, fmt.Errorf("%w: no job workload", errNotAJob)
	}
	if want := SpecKey(j.Workload.Name); key != want {
		return j, fmt.Errorf("%w: the submission of job %q belongs under %s", errNotAJob, j.Workload.Name, want)
	}
	return j, nil
}

// CheckRun is DecodeRun's verdict alone, in the form a compare-and-set's check of the value
// found takes (key unused).
func CheckRun(_ string, data []byte) error {
	_, err := DecodeRun(data)
	return err
}

// DecodeRun reads a job's run: one that does not decode or has no known state is not a job.
func DecodeRun(data []byte) (Run, error) {
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%w: %w", errNotAJob, err)
	}
	switch r.State {
	case events.JobSubmitted, events.JobRunning, events.JobWaiting, events.JobCheckpointing,
		events.JobFinished, events.JobCancelled, events.JobFailed:
		return r, nil
	}
	return r, fmt.Errorf("%w: state %q", errNotAJob, r.State)
}
