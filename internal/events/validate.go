package events

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// check collects the first problem found while validating one event.
type check struct {
	t   Type
	err error
}

func (c *check) fail(field string, sentinel error, format string, args ...any) {
	if c.err == nil {
		c.err = &Error{Type: c.t, Field: field, Err: sentinel, Detail: fmt.Sprintf(format, args...)}
	}
}

func (c *check) text(field, v string) {
	if v == "" {
		c.fail(field, ErrMissingField, "must not be empty")
	}
}

func (c *check) nonNegative(field string, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		c.fail(field, ErrOutOfRange, "must be a finite number, got %v", v)
	case v < 0:
		c.fail(field, ErrOutOfRange, "must be >= 0, got %v", v)
	}
}

func (c *check) between(field string, v, lo, hi float64) {
	if math.IsNaN(v) || v < lo || v > hi {
		c.fail(field, ErrOutOfRange, "must be between %v and %v, got %v", lo, hi, v)
	}
}

func (c *check) atLeast(field string, v, lo int) {
	if v < lo {
		c.fail(field, ErrOutOfRange, "must be >= %d, got %d", lo, v)
	}
}

func (c *check) time(field string, t time.Time) {
	switch {
	case t.IsZero():
		c.fail(field, ErrMissingField, "must be a non-zero time")
	case t.Location() != time.UTC:
		c.fail(field, ErrOutOfRange, "must be in UTC (end with Z), got %s", t.Format(time.RFC3339))
	case t.Before(MinTime) || !t.Before(MaxTime):
		c.fail(field, ErrOutOfRange, "must be from %s to before %s (what the history holds), got %s",
			stamp(MinTime), stamp(MaxTime), stamp(t))
	}
}

func (c *check) oneOf(field, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	// Joined here rather than formatted with %v, which would move every call's list to the heap.
	c.fail(field, ErrOutOfRange, "must be one of [%s], got %q", strings.Join(allowed, " "), v)
}

func (c *check) market(field string, m Market) {
	c.oneOf(field, string(m), string(Spot), string(OnDemand), string(Reserved))
}

// The times an event may carry. Every time field lies in [MinTime, MaxTime), checked by Validate:
// well inside what the history store holds (DateTime64(3) holds 1900-2299, and the hourly rollups'
// DateTime, which at is converted to, 1970 to 2106-02-07), and nothing Bursar observes is older.
// The envelope's at, when the fact was observed, lies at most MaxSkew after the reader's clock,
// checked by CheckTime (and ValidateAt) where a clock is at hand: a time in the future is a wrong
// clock or a forgery, and would count as current for as long as it lies ahead. There is no bound
// into the past beyond MinTime: readers treat old samples as stale, and the history keeps them.
var (
	MinTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// MaxSkew is how far an event's at may lie ahead of the clock of the part that reads or sends it:
// room for clocks that disagree by far more than NTP lets them, and less than the staleness limits
// that decide what is current (the arbiter counts telemetry up to 5 min old).
const MaxSkew = 2 * time.Minute

// CheckTime checks an event's at against a clock: it refuses one more than MaxSkew after now. The
// event is otherwise taken as valid (Decode and DecodeAll have validated it).
func CheckTime(e Event, now time.Time) error {
	at := e.Header().At
	if limit := now.Add(MaxSkew); at.After(limit) {
		return &Error{Type: e.EventType(), Field: "at", Err: ErrOutOfRange, Detail: fmt.Sprintf(
			"must be at most %v after now (by this clock: no later than %s), got %s: check the sender's clock",
			MaxSkew, stamp(limit), stamp(at))}
	}
	return nil
}

// ValidateAt is Validate and CheckTime: for a part that sends or reads events by a clock.
func ValidateAt(e Event, now time.Time) error {
	if err := Validate(e); err != nil {
		return err
	}
	return CheckTime(e, now)
}

// Validate checks an event's envelope and fields, times against the absolute range [MinTime,
// MaxTime) only: it reads no clock. The error names the first bad field.
func Validate(e Event) error {
	c := &check{t: e.EventType()}
	m := e.Header()
	if m.Type != e.EventType() {
		c.fail("type", ErrOutOfRange, "must be %q, got %q", e.EventType(), m.Type)
	}
	c.text("version", m.Version)
	if c.err == nil {
		if _, err := major(m.Version); err != nil {
			c.fail("version", ErrVersion, "%v", err)
		}
	}
	c.text("id", m.ID)
	c.time("at", m.At)
	if c.err != nil {
		return c.err
	}
	return e.validate()
}

func (e *PriceObserved) validate() error {
	c := &check{t: e.EventType()}
	c.text("provider", e.Provider)
	c.text("region", e.Region)
	c.text("instance_type", e.InstanceType)
	c.text("gpu_model", e.GPUModel)
	c.atLeast("gpu_count", e.GPUCount, 1)
	c.nonNegative("gpu_memory_gb", e.GPUMemoryGB)
	c.market("market", e.Market)
	c.nonNegative("usd_per_hour", e.USDPerHour)
	c.text("source", e.Source)
	return c.err
}

func (e *CapacityReclaimed) validate() error {
	c := &check{t: e.EventType()}
	c.text("provider", e.Provider)
	c.text("region", e.Region)
	c.text("location", e.Location)
	c.text("instance", e.Instance)
	c.oneOf("kind", string(e.Kind), string(ReclaimInterruption), string(ReclaimRebalance),
		string(ReclaimPreempted), string(ReclaimMaintenance))
	c.time("notice_at", e.NoticeAt)
	c.time("deadline", e.Deadline)
	if c.err == nil && e.Deadline.Before(e.NoticeAt) {
		c.fail("deadline", ErrOutOfRange, "must not be before notice_at (%s), got %s",
			stamp(e.NoticeAt), stamp(e.Deadline))
	}
	c.text("source", e.Source)
	return c.err
}

func (e *GPUSample) validate() error {
	c := &check{t: e.EventType()}
	c.text("location", e.Location)
	c.text("node", e.Node)
	c.text("uuid", e.UUID)
	c.atLeast("index", e.Index, 0)
	c.text("model", e.Model)
	c.between("utilization_pct", e.UtilizationPct, 0, 100)
	c.nonNegative("memory_used_bytes", float64(e.MemoryUsedBytes))
	c.nonNegative("memory_total_bytes", float64(e.MemoryTotalBytes))
	if c.err == nil && e.MemoryUsedBytes > e.MemoryTotalBytes {
		c.fail("memory_used_bytes", ErrOutOfRange, "must be <= memory_total_bytes (%d), got %d",
			e.MemoryTotalBytes, e.MemoryUsedBytes)
	}
	c.nonNegative("power_w", e.PowerW)
	c.between("temperature_c", e.TemperatureC, -50, 150)
	return c.err
}

func (e *TokensSample) validate() error {
	c := &check{t: e.EventType()}
	c.text("location", e.Location)
	c.text("workload", e.Workload)
	c.text("replica", e.Replica)
	c.oneOf("server", e.Server, "vllm", "tgi", "other")
	c.nonNegative("prompt_tokens", float64(e.PromptTokens))
	c.nonNegative("generation_tokens", float64(e.GenerationTokens))
	c.nonNegative("requests", float64(e.Requests))
	return c.err
}

func (e *ReplicaState) validate() error {
	c := &check{t: e.EventType()}
	c.text("workload", e.Workload)
	c.text("location", e.Location)
	c.text("provider", e.Provider)
	c.market("market", e.Market)
	c.text("offer", e.Offer)
	c.text("gpu_model", e.GPUModel)
	c.atLeast("gpus_per_replica", e.GPUs, 1)
	c.nonNegative("usd_per_hour", e.USDPerHour)
	c.atLeast("desired", e.Desired, 0)
	c.atLeast("ready", e.Ready, 0)
	for i, in := range e.Instances {
		if in == "" { // the field is named only on failure, so a valid event formats nothing
			c.fail(fmt.Sprintf("instances[%d]", i), ErrMissingField, "must not be empty")
		}
	}
	return c.err
}

func (e *PlanDecided) validate() error {
	c := &check{t: e.EventType()}
	c.text("workload", e.Workload)
	c.text("plan_id", e.PlanID)
	c.nonNegative("usd_per_hour_before", e.USDPerHourWas)
	c.nonNegative("usd_per_hour_after", e.USDPerHourNow)
	for i := range e.Actions {
		if c.err != nil {
			break
		}
		c.err = e.Actions[i].validate(c.t, i)
	}
	return c.err
}

// validate checks the action at index i of a plan of type t; the error's field is
// "actions[i].<field>", named only when there is one to report.
func (a *PlanAction) validate(t Type, i int) error {
	c := &check{t: t}
	c.text("id", a.ID)
	c.oneOf("kind", a.Kind, "launch", "drain", "retire", "scale")
	c.text("location", a.Location)
	c.market("market", a.Market)
	c.atLeast("replicas", a.Replicas, 0)
	c.text("reason", a.Reason)
	if ee, ok := c.err.(*Error); ok {
		ee.Field = fmt.Sprintf("actions[%d].%s", i, ee.Field)
	}
	return c.err
}

func (e *ActionUpdated) validate() error {
	c := &check{t: e.EventType()}
	c.text("workload", e.Workload)
	c.text("action_id", e.ActionID)
	c.oneOf("status", string(e.Status), string(ActionProposed), string(ActionAwaitingApproval),
		string(ActionApproved), string(ActionRejected), string(ActionApplied), string(ActionFailed),
		string(ActionExpired))
	c.oneOf("kind", e.Kind, "launch", "drain", "retire", "scale")
	c.text("location", e.Location)
	c.market("market", e.Market)
	c.atLeast("replicas", e.Replicas, 0)
	return c.err
}

func (e *CostAnomaly) validate() error {
	c := &check{t: e.EventType()}
	c.text("anomaly", e.Anomaly)
	c.oneOf("state", e.State, "open", "update", "closed")
	c.text("series", e.Series)
	c.text("cause", e.Cause)
	c.time("start", e.Start)
	c.nonNegative("expected_usd_per_hour", e.Expected)
	c.nonNegative("observed_usd_per_hour", e.Observed)
	c.text("currency", e.Currency)
	return c.err
}

func (e *BudgetAlert) validate() error {
	c := &check{t: e.EventType()}
	c.text("policy", e.Policy)
	c.text("scope", e.Scope)
	c.oneOf("period", e.Period, "day", "week", "month")
	c.time("period_start", e.PeriodStart)
	c.oneOf("basis", e.Basis, "actual", "forecast")
	c.text("threshold", e.Threshold)
	c.nonNegative("spend", e.Spend)
	c.nonNegative("limit", e.Limit)
	c.text("currency", e.Currency)
	return c.err
}
