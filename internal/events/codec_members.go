package events

import "time"

// member is one JSON member of an event or a plan action: its name on the wire, whether it is
// left out when empty (omitempty), and the field its value is read into and written from. The
// lists below are what Encode and Decode's one-pass path walk instead of reflecting on the types
// for every message; TestMembersMatchStructTags keeps them equal to the struct tags, which stay
// the contract (the JSON Schemas are tested against those).
type member struct {
	name      string
	omitEmpty bool
	val       any // *string, *int, *int64, *float64, *bool, *time.Time, **time.Time, *[]string or *[]PlanAction
}

// maxMembers is the most members an event has (JobState: 4 + 17), so the lists fit on the stack.
const maxMembers = 24

func req(name string, v any) member { return member{name: name, val: v} }
func opt(name string, v any) member { return member{name: name, omitEmpty: true, val: v} }

// membersOf appends e's members, envelope first, in the order of the struct's fields (the order
// encoding/json writes them). It is a type switch rather than an interface method so that the
// list stays on the caller's stack. Nil for a type it does not know.
func membersOf(e Event, ms []member) []member {
	switch e := e.(type) {
	case *PriceObserved:
		return e.members(e.Meta.members(ms))
	case *CapacityReclaimed:
		return e.members(e.Meta.members(ms))
	case *GPUSample:
		return e.members(e.Meta.members(ms))
	case *TokensSample:
		return e.members(e.Meta.members(ms))
	case *ReplicaState:
		return e.members(e.Meta.members(ms))
	case *PlanDecided:
		return e.members(e.Meta.members(ms))
	case *ActionUpdated:
		return e.members(e.Meta.members(ms))
	case *BudgetAlert:
		return e.members(e.Meta.members(ms))
	case *JobProgress:
		return e.members(e.Meta.members(ms))
	case *JobState:
		return e.members(e.Meta.members(ms))
	case *CostAnomaly:
		return e.members(e.Meta.members(ms))
	}
	return nil
}

func (m *Meta) members(ms []member) []member {
	return append(ms, req("type", (*string)(&m.Type)), req("version", &m.Version),
		req("id", &m.ID), req("at", &m.At))
}

func (e *PriceObserved) members(ms []member) []member {
	return append(ms, req("provider", &e.Provider), req("region", &e.Region),
		opt("zone", &e.Zone), req("instance_type", &e.InstanceType),
		req("gpu_model", &e.GPUModel), req("gpu_count", &e.GPUCount),
		req("gpu_memory_gb", &e.GPUMemoryGB), req("market", (*string)(&e.Market)),
		req("usd_per_hour", &e.USDPerHour), req("source", &e.Source))
}

func (e *CapacityReclaimed) members(ms []member) []member {
	return append(ms, req("provider", &e.Provider), req("region", &e.Region),
		req("location", &e.Location), opt("zone", &e.Zone), req("instance", &e.Instance),
		opt("node", &e.Node), req("kind", (*string)(&e.Kind)), req("notice_at", &e.NoticeAt),
		req("deadline", &e.Deadline), req("source", &e.Source))
}

func (e *GPUSample) members(ms []member) []member {
	return append(ms, req("location", &e.Location), req("node", &e.Node),
		req("uuid", &e.UUID), req("index", &e.Index), req("model", &e.Model),
		req("utilization_pct", &e.UtilizationPct), req("memory_used_bytes", &e.MemoryUsedBytes),
		req("memory_total_bytes", &e.MemoryTotalBytes), req("power_w", &e.PowerW),
		req("temperature_c", &e.TemperatureC))
}

func (e *TokensSample) members(ms []member) []member {
	return append(ms, req("location", &e.Location), req("workload", &e.Workload),
		req("replica", &e.Replica), req("server", &e.Server),
		req("prompt_tokens", &e.PromptTokens), req("generation_tokens", &e.GenerationTokens),
		req("requests", &e.Requests), opt("reset", &e.Reset))
}

func (e *ReplicaState) members(ms []member) []member {
	return append(ms, req("workload", &e.Workload), req("location", &e.Location),
		req("provider", &e.Provider), req("market", (*string)(&e.Market)),
		req("offer", &e.Offer), req("gpu_model", &e.GPUModel), req("gpus_per_replica", &e.GPUs),
		req("usd_per_hour", &e.USDPerHour), req("desired", &e.Desired), req("ready", &e.Ready),
		opt("instances", &e.Instances))
}

func (e *PlanDecided) members(ms []member) []member {
	return append(ms, req("workload", &e.Workload), req("plan_id", &e.PlanID),
		req("actions", &e.Actions), req("usd_per_hour_before", &e.USDPerHourWas),
		req("usd_per_hour_after", &e.USDPerHourNow), opt("needs_approval", &e.NeedsApproval))
}

func (a *PlanAction) members(ms []member) []member {
	return append(ms, req("id", &a.ID), req("kind", &a.Kind), req("location", &a.Location),
		req("offer", &a.Offer), req("market", (*string)(&a.Market)),
		req("replicas", &a.Replicas), req("delta", &a.Delta), req("reason", &a.Reason),
		opt("needs_approval", &a.NeedsApproval))
}

func (e *ActionUpdated) members(ms []member) []member {
	return append(ms, req("workload", &e.Workload), req("action_id", &e.ActionID),
		opt("plan_id", &e.PlanID), req("status", (*string)(&e.Status)), req("kind", &e.Kind),
		req("location", &e.Location), opt("offer", &e.Offer),
		req("market", (*string)(&e.Market)), req("replicas", &e.Replicas),
		opt("reason", &e.Reason), opt("actor", &e.Actor), opt("detail", &e.Detail))
}

func (e *BudgetAlert) members(ms []member) []member {
	return append(ms, req("policy", &e.Policy), req("scope", &e.Scope),
		req("period", &e.Period), req("period_start", &e.PeriodStart), req("basis", &e.Basis),
		req("threshold", &e.Threshold), req("spend", &e.Spend), req("limit", &e.Limit),
		req("currency", &e.Currency), opt("cleared", &e.Cleared))
}

func (e *CostAnomaly) members(ms []member) []member {
	return append(ms, req("anomaly", &e.Anomaly), req("state", &e.State), req("series", &e.Series),
		req("cause", &e.Cause), req("start", &e.Start), req("expected_usd_per_hour", &e.Expected),
		req("observed_usd_per_hour", &e.Observed), req("impact_usd", &e.Impact),
		req("currency", &e.Currency), opt("moved", &e.Moved))
}

// empty reports whether omitempty leaves the member out, as encoding/json decides it: a false,
// a zero number, an empty string or slice. A time is a struct and never empty.
func (m member) empty() bool {
	switch p := m.val.(type) {
	case *string:
		return *p == ""
	case *int:
		return *p == 0
	case *int64:
		return *p == 0
	case *float64:
		return *p == 0
	case *bool:
		return !*p
	case *[]PlanAction:
		return len(*p) == 0
	case *[]string:
		return len(*p) == 0
	case *time.Time:
		return false
	case **time.Time:
		return *p == nil
	}
	return false
}
