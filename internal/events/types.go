package events

import "time"

// Market is how an offer is sold.
type Market string

// The markets an offer can be sold on.
const (
	Spot     Market = "spot"
	OnDemand Market = "on_demand"
	Reserved Market = "reserved"
)

// ReclaimKind says why capacity is being taken back.
type ReclaimKind string

// The kinds of reclaim notice the watchers report.
const (
	ReclaimInterruption ReclaimKind = "interruption"
	ReclaimRebalance    ReclaimKind = "rebalance"
	ReclaimPreempted    ReclaimKind = "preempted"
	ReclaimMaintenance  ReclaimKind = "maintenance"
)

// ActionStatus is a step in an action's lifecycle.
type ActionStatus string

// The lifecycle of an action.
const (
	ActionProposed         ActionStatus = "proposed"
	ActionAwaitingApproval ActionStatus = "awaiting_approval"
	ActionApproved         ActionStatus = "approved"
	ActionRejected         ActionStatus = "rejected"
	ActionApplied          ActionStatus = "applied"
	ActionFailed           ActionStatus = "failed"
	ActionExpired          ActionStatus = "expired"
)

// PriceObserved is one offer's price as a source saw it at At.
type PriceObserved struct {
	Meta
	Provider     string  `json:"provider"`
	Region       string  `json:"region"`
	Zone         string  `json:"zone,omitempty"`
	InstanceType string  `json:"instance_type"`
	GPUModel     string  `json:"gpu_model"`
	GPUCount     int     `json:"gpu_count"`
	GPUMemoryGB  float64 `json:"gpu_memory_gb"`
	Market       Market  `json:"market"`
	USDPerHour   float64 `json:"usd_per_hour"` // price of one instance-hour
	Source       string  `json:"source"`
}

// CapacityReclaimed says a spot or preemptible instance is being taken back by Deadline.
type CapacityReclaimed struct {
	Meta
	Provider string      `json:"provider"`
	Region   string      `json:"region"`
	Location string      `json:"location"`
	Zone     string      `json:"zone,omitempty"`
	Instance string      `json:"instance"`
	Node     string      `json:"node,omitempty"`
	Kind     ReclaimKind `json:"kind"`
	NoticeAt time.Time   `json:"notice_at"`
	Deadline time.Time   `json:"deadline"`
	Source   string      `json:"source"`
}

// GPUSample is one GPU's telemetry at At.
type GPUSample struct {
	Meta
	Location         string  `json:"location"`
	Node             string  `json:"node"`
	UUID             string  `json:"uuid"`
	Index            int     `json:"index"`
	Model            string  `json:"model"`
	UtilizationPct   float64 `json:"utilization_pct"`
	MemoryUsedBytes  int64   `json:"memory_used_bytes"`
	MemoryTotalBytes int64   `json:"memory_total_bytes"`
	PowerW           float64 `json:"power_w"`
	TemperatureC     float64 `json:"temperature_c"`
}

// TokensSample is one replica's monotonic counters at At. Reset is set when a counter went down
// since the previous sample (the server restarted), so consumers start a new series.
type TokensSample struct {
	Meta
	Location         string `json:"location"`
	Workload         string `json:"workload"`
	Replica          string `json:"replica"`
	Server           string `json:"server"`
	PromptTokens     int64  `json:"prompt_tokens"`
	GenerationTokens int64  `json:"generation_tokens"`
	Requests         int64  `json:"requests"`
	Reset            bool   `json:"reset,omitempty"`
}

// ReplicaState is the observed replicas of one workload on one offer at one location. The price
// and GPUs per replica ride along so that cost is the exact integral of price over time, and the
// instances (where the actuator names them) so that a provider's bill can be matched to the
// workload by resource id.
type ReplicaState struct {
	Meta
	Workload   string  `json:"workload"`
	Location   string  `json:"location"`
	Provider   string  `json:"provider"`
	Market     Market  `json:"market"`
	Offer      string  `json:"offer"`
	GPUModel   string  `json:"gpu_model"`
	GPUs       int     `json:"gpus_per_replica"`
	USDPerHour float64 `json:"usd_per_hour"` // price of one replica-hour
	Desired    int     `json:"desired"`
	Ready      int     `json:"ready"`
	// Instances are the ids of the instances (or nodes) the ready replicas run on, as the
	// actuator reports them (actuate.Observed.Instances); empty when it does not say.
	Instances []string `json:"instances,omitempty"`
}

// PlanAction is one step of a plan.
type PlanAction struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"` // launch, drain, retire (a reclaimed replica is gone) or scale
	Location      string `json:"location"`
	Offer         string `json:"offer"`
	Market        Market `json:"market"`
	Replicas      int    `json:"replicas"` // the target count on that offer
	Delta         int    `json:"delta"`
	Reason        string `json:"reason"`
	NeedsApproval bool   `json:"needs_approval,omitempty"`
}

// PlanDecided is a plan the arbiter decided for one workload.
type PlanDecided struct {
	Meta
	Workload      string       `json:"workload"`
	PlanID        string       `json:"plan_id"`
	Actions       []PlanAction `json:"actions"`
	USDPerHourWas float64      `json:"usd_per_hour_before"`
	USDPerHourNow float64      `json:"usd_per_hour_after"`
	NeedsApproval bool         `json:"needs_approval,omitempty"`
}

// ReasonLaunchFailed is the Reason of the action.updated (kind retire) that gives up a launch
// which got no capacity or was not ready within its launch timeout. Reports count launch failures
// by it, so the arbiter and the reports must agree on it.
const ReasonLaunchFailed = "launch_failed"

// ActionUpdated is one step in an action's lifecycle: who moved it and when.
type ActionUpdated struct {
	Meta
	Workload string       `json:"workload"`
	ActionID string       `json:"action_id"`
	PlanID   string       `json:"plan_id,omitempty"`
	Status   ActionStatus `json:"status"`
	Kind     string       `json:"kind"`
	Location string       `json:"location"`
	Offer    string       `json:"offer,omitempty"`
	Market   Market       `json:"market"`
	Replicas int          `json:"replicas"`
	Reason   string       `json:"reason,omitempty"`
	Actor    string       `json:"actor,omitempty"`
	Detail   string       `json:"detail,omitempty"`
}

// BudgetAlert says a budget threshold was crossed (or cleared) on actual or forecast spend.
type BudgetAlert struct {
	Meta
	Policy      string    `json:"policy"`
	Scope       string    `json:"scope"`
	Period      string    `json:"period"` // day, week or month
	PeriodStart time.Time `json:"period_start"`
	Basis       string    `json:"basis"`     // actual or forecast
	Threshold   string    `json:"threshold"` // as configured: "80%" or "40000"
	Spend       float64   `json:"spend"`
	Limit       float64   `json:"limit"`
	Currency    string    `json:"currency"`
	Cleared     bool      `json:"cleared,omitempty"`
}

// CostAnomaly says a cost series spends away from what its own history expects: opened when the
// detector is sure, updated while it goes on, closed when spend is back within the baseline. An
// anomaly's open, updates and close carry the same Anomaly id.
type CostAnomaly struct {
	Meta
	Anomaly string `json:"anomaly"`
	State   string `json:"state"` // open, update or closed
	// Series is the series' key, its dimensions in a fixed order:
	// "workload=llm,location=aws-use1,gpu_model=H100-80GB,market=spot", "team=search" or "budget=llm-monthly".
	Series string `json:"series"`
	// Cause is what an answer to it quiets: the series and the dimensions that moved.
	Cause    string    `json:"cause"`
	Start    time.Time `json:"start"` // the start of the first interval out of the baseline
	Expected float64   `json:"expected_usd_per_hour"`
	Observed float64   `json:"observed_usd_per_hour"`
	Impact   float64   `json:"impact_usd"` // observed minus expected spend since Start
	Currency string    `json:"currency"`
	// Moved are the child dimensions that explain it, most first ("location=aws-use1").
	Moved []string `json:"moved,omitempty"`
}

func (*PriceObserved) EventType() Type     { return TypePriceObserved }
func (*CapacityReclaimed) EventType() Type { return TypeCapacityReclaimed }
func (*GPUSample) EventType() Type         { return TypeGPUSample }
func (*TokensSample) EventType() Type      { return TypeTokensSample }
func (*ReplicaState) EventType() Type      { return TypeReplicaState }
func (*PlanDecided) EventType() Type       { return TypePlanDecided }
func (*ActionUpdated) EventType() Type     { return TypeActionUpdated }
func (*BudgetAlert) EventType() Type       { return TypeBudgetAlert }
func (*CostAnomaly) EventType() Type       { return TypeCostAnomaly }

// Header returns the envelope.
func (m *Meta) Header() *Meta { return m }

func (e *PriceObserved) Subject() string {
	return subject(subjectRoots[TypePriceObserved], e.Provider, e.Region)
}
func (e *CapacityReclaimed) Subject() string {
	return subject(subjectRoots[TypeCapacityReclaimed], e.Provider, e.Region)
}
func (e *GPUSample) Subject() string { return subject(subjectRoots[TypeGPUSample], e.Location, e.Node) }
func (e *TokensSample) Subject() string {
	return subject(subjectRoots[TypeTokensSample], e.Location, e.Workload)
}
func (e *ReplicaState) Subject() string {
	return subject(subjectRoots[TypeReplicaState], e.Workload, e.Location)
}
func (e *PlanDecided) Subject() string   { return subject(subjectRoots[TypePlanDecided], e.Workload) }
func (e *ActionUpdated) Subject() string { return subject(subjectRoots[TypeActionUpdated], e.Workload) }
func (e *BudgetAlert) Subject() string   { return subject(subjectRoots[TypeBudgetAlert], e.Policy) }
func (e *CostAnomaly) Subject() string   { return subject(subjectRoots[TypeCostAnomaly], e.Anomaly) }

func (e *PriceObserved) identity() []string {
	return []string{e.Source, e.Provider, e.Region, e.Zone, e.InstanceType, string(e.Market)}
}
func (e *CapacityReclaimed) identity() []string {
	return []string{e.Provider, e.Instance, string(e.Kind), stamp(e.Deadline)}
}
func (e *GPUSample) identity() []string { return []string{e.Location, e.Node, e.UUID} }
func (e *TokensSample) identity() []string {
	return []string{e.Location, e.Workload, e.Replica}
}
func (e *ReplicaState) identity() []string {
	return []string{e.Workload, e.Location, string(e.Market), e.Offer}
}
func (e *PlanDecided) identity() []string { return []string{e.Workload, e.PlanID} }
func (e *ActionUpdated) identity() []string {
	return []string{e.Workload, e.ActionID, string(e.Status)}
}
func (e *BudgetAlert) identity() []string {
	return []string{e.Policy, stamp(e.PeriodStart), e.Basis, e.Threshold, boolWord(e.Cleared)}
}

func (e *CostAnomaly) identity() []string {
	return []string{e.Anomaly, e.State, stamp(e.At)}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func boolWord(b bool) string {
	if b {
		return "cleared"
	}
	return "crossed"
}

// New returns an empty event of type t, or nil for an unknown type.
func New(t Type) Event {
	switch t {
	case TypePriceObserved:
		return &PriceObserved{}
	case TypeCapacityReclaimed:
		return &CapacityReclaimed{}
	case TypeGPUSample:
		return &GPUSample{}
	case TypeTokensSample:
		return &TokensSample{}
	case TypeReplicaState:
		return &ReplicaState{}
	case TypePlanDecided:
		return &PlanDecided{}
	case TypeActionUpdated:
		return &ActionUpdated{}
	case TypeBudgetAlert:
		return &BudgetAlert{}
	case TypeJobProgress:
		return &JobProgress{}
	case TypeJobState:
		return &JobState{}
	case TypeCostAnomaly:
		return &CostAnomaly{}
	}
	return nil
}
