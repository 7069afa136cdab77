package events

import (
	"strconv"
	"time"
)

// JobStatus is where a deadline-bound job is in its life.
type JobStatus string

// The states of a job. A job waits when it holds no instance (no capacity worth taking now), and
// checkpoints between a reclaim notice and the instance's end.
const (
	JobSubmitted     JobStatus = "submitted"
	JobRunning       JobStatus = "running"
	JobWaiting       JobStatus = "waiting"
	JobCheckpointing JobStatus = "checkpointing"
	JobFinished      JobStatus = "finished"
	JobCancelled     JobStatus = "cancelled"
	JobFailed        JobStatus = "failed"
)

// JobProgress is a job's checkpointed progress at At: reported by the job itself, or estimated by
// the arbiter from the time its instance was ready (Estimated), so the planner knows the work left.
type JobProgress struct {
	Meta
	Job          string     `json:"job"`
	WorkDoneS    float64    `json:"work_done_s"` // work done, in seconds of compute at one replica
	CheckpointAt *time.Time `json:"checkpoint_at,omitempty"`
	Location     string     `json:"location"`
	Market       Market     `json:"market"`
	Estimated    bool       `json:"estimated,omitempty"`
}

// JobState is a job's state as the arbiter sees it after each change: where it runs, how far it
// is, what it has cost and lost so far. Reports read a job's last state for its cost, deadline
// and time lost; GPUs and OnDemandUSDPerHour let them count GPU-hours and price the same work on
// on-demand.
type JobState struct {
	Meta
	Job         string     `json:"job"`
	Team        string     `json:"team,omitempty"`
	State       JobStatus  `json:"state"`
	WorkS       float64    `json:"work_s"`      // compute the job needs at one replica
	WorkDoneS   float64    `json:"work_done_s"` // checkpointed progress
	Deadline    time.Time  `json:"deadline"`
	OverheadS   float64    `json:"overhead_s"` // time lost to each (re)launch
	Location    string     `json:"location,omitempty"`
	Market      Market     `json:"market,omitempty"` // empty when nothing runs
	GPUs        int        `json:"gpus_per_replica,omitempty"`
	USDPerHour  float64    `json:"usd_per_hour,omitempty"` // the price of what runs now
	OnDemandUSD float64    `json:"on_demand_usd_per_hour,omitempty"`
	USDSpent    float64    `json:"usd_spent"` // the arbiter's running total of the job's cost
	Preemptions int        `json:"preemptions"`
	LostS       float64    `json:"lost_s"` // time lost to preemptions and overheads
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	Reason      string     `json:"reason,omitempty"`
}

func (*JobProgress) EventType() Type { return TypeJobProgress }
func (*JobState) EventType() Type    { return TypeJobState }

func (e *JobProgress) Subject() string { return subject(subjectRoots[TypeJobProgress], e.Job) }
func (e *JobState) Subject() string    { return subject(subjectRoots[TypeJobState], e.Job) }

func (e *JobProgress) identity() []string {
	source := "reported"
	if e.Estimated {
		source = "estimated"
	}
	return []string{e.Job, source, strconv.FormatFloat(e.WorkDoneS, 'g', -1, 64)}
}

func (e *JobState) identity() []string {
	return []string{e.Job, string(e.State), e.Location, string(e.Market),
		strconv.FormatFloat(e.WorkDoneS, 'g', -1, 64), strconv.Itoa(e.Preemptions)}
}

func (e *JobProgress) validate() error {
	c := &check{t: e.EventType()}
	c.text("job", e.Job)
	c.nonNegative("work_done_s", e.WorkDoneS)
	if e.CheckpointAt != nil {
		c.time("checkpoint_at", *e.CheckpointAt)
		if c.err == nil && e.CheckpointAt.After(e.At) {
			c.fail("checkpoint_at", ErrOutOfRange, "must not be after at (%s), got %s",
				stamp(e.At), stamp(*e.CheckpointAt))
		}
	}
	c.text("location", e.Location)
	c.market("market", e.Market)
	return c.err
}

func (e *JobState) validate() error {
	c := &check{t: e.EventType()}
	c.text("job", e.Job)
	c.oneOf("state", string(e.State), string(JobSubmitted), string(JobRunning), string(JobWaiting),
		string(JobCheckpointing), string(JobFinished), string(JobCancelled), string(JobFailed))
	c.nonNegative("work_s", e.WorkS)
	if c.err == nil && e.WorkS == 0 {
		c.fail("work_s", ErrOutOfRange, "must be > 0: a job needs some work")
	}
	c.nonNegative("work_done_s", e.WorkDoneS)
	if c.err == nil && e.WorkDoneS > e.WorkS {
		c.fail("work_done_s", ErrOutOfRange, "must be <= work_s (%v), got %v", e.WorkS, e.WorkDoneS)
	}
	c.time("deadline", e.Deadline)
	c.nonNegative("overhead_s", e.OverheadS)
	e.validatePlace(c)
	c.atLeast("gpus_per_replica", e.GPUs, 0)
	c.nonNegative("usd_per_hour", e.USDPerHour)
	c.nonNegative("on_demand_usd_per_hour", e.OnDemandUSD)
	c.nonNegative("usd_spent", e.USDSpent)
	c.atLeast("preemptions", e.Preemptions, 0)
	c.nonNegative("lost_s", e.LostS)
	e.validateEnd(c)
	return c.err
}

// validatePlace checks where the job runs: a running or checkpointing job is somewhere, on a
// known market; a market, when given, is one of the known ones.
func (e *JobState) validatePlace(c *check) {
	if e.State == JobRunning || e.State == JobCheckpointing {
		c.text("location", e.Location)
		c.text("market", string(e.Market))
	}
	if e.Market != "" {
		c.market("market", e.Market)
	}
}

// validateEnd checks the finish time: a finished job says when it finished, and a finish time
// is a UTC time.
func (e *JobState) validateEnd(c *check) {
	if e.FinishedAt == nil {
		if e.State == JobFinished {
			c.fail("finished_at", ErrMissingField, "a finished job must say when it finished")
		}
		return
	}
	c.time("finished_at", *e.FinishedAt)
}

func (e *JobProgress) members(ms []member) []member {
	return append(ms, req("job", &e.Job), req("work_done_s", &e.WorkDoneS),
		opt("checkpoint_at", &e.CheckpointAt), req("location", &e.Location),
		req("market", (*string)(&e.Market)), opt("estimated", &e.Estimated))
}

func (e *JobState) members(ms []member) []member {
	return append(ms, req("job", &e.Job), opt("team", &e.Team), req("state", (*string)(&e.State)),
		req("work_s", &e.WorkS), req("work_done_s", &e.WorkDoneS), req("deadline", &e.Deadline),
		req("overhead_s", &e.OverheadS), opt("location", &e.Location),
		opt("market", (*string)(&e.Market)), opt("gpus_per_replica", &e.GPUs),
		opt("usd_per_hour", &e.USDPerHour), opt("on_demand_usd_per_hour", &e.OnDemandUSD),
		req("usd_spent", &e.USDSpent), req("preemptions", &e.Preemptions), req("lost_s", &e.LostS),
		opt("finished_at", &e.FinishedAt), opt("reason", &e.Reason))
}
