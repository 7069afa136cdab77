package placement

import "time"

// ActionKind is what an action does.
type ActionKind string

// The actions a plan can hold.
const (
	// ActionLaunch starts Count new replicas of the workload on Offer.
	ActionLaunch ActionKind = "launch"
	// ActionDrain stops the listed replicas. The planner emits a drain for a replica it replaces
	// only once enough other replicas are ready (make-before-break).
	ActionDrain ActionKind = "drain"
	// ActionScale sets the workload's replica count to Count. The planner uses it for a cut a
	// budget asks for that would go below the workload's minimum: it always needs approval.
	ActionScale ActionKind = "scale"
)

// Reason says why an action is in the plan.
type Reason string

// The reasons an action can carry.
const (
	ReasonReclaim      Reason = "reclaim"       // replaces a reclaimed or lost replica
	ReasonCheaperOffer Reason = "cheaper_offer" // a move that pays for itself (spot return included)
	ReasonDemandUp     Reason = "demand_up"     // more ready replicas are needed
	ReasonDemandDown   Reason = "demand_down"   // fewer replicas are needed
	ReasonBudget       Reason = "budget"        // a budget cap asks for less spend
	ReasonResidency    Reason = "residency"     // the replica's location no longer qualifies
	ReasonHedge        Reason = "hedge"         // an extra spot replica held against preemption
	ReasonFallback     Reason = "fallback"      // on-demand stands in for spot that is short
)

// Action is one step of a plan.
type Action struct {
	// ID is deterministic: the same snapshot, policy and time give the same ids, so an actuator
	// can deduplicate a re-sent plan.
	ID       string
	Kind     ActionKind
	Workload string
	Offer    string   // launch: where; drain: where the replicas run
	Count    int      // launch: how many; scale: the target replica count
	Replicas []string // drain: which replicas
	Reason   Reason
	// NeedsApproval marks an action a person must approve before it is applied: a budget cut
	// below the workload's minimum.
	NeedsApproval bool
	// CostPerHour is the change in spend per hour the action makes once applied (negative for
	// drains and cuts).
	CostPerHour float64
	Note        string // a short human explanation
}

// Shortfall says a workload cannot get what it needs from the offers there are.
type Shortfall struct {
	Workload string
	Wanted   int // ready replicas needed (for a workload planned by rate, an estimate at its fastest model)
	Placed   int // replicas the plan could place
	// WantedRate and PlacedRate are, for a workload planned by rate, the rate it needs and the
	// rate the placed replicas serve, in its Throughput unit; 0 for one planned in replicas.
	WantedRate float64
	PlacedRate float64
	Why        string
}

// Decision is the planner's answer for one snapshot: the plan Plan returns.
type Decision struct {
	At      time.Time
	Actions []Action
	// CostPerHourBefore is the spend per hour of the replicas that hold capacity now (launching,
	// ready, draining and reclaimed); CostPerHourAfter is the spend once every action is applied
	// and every replica the plan keeps is running.
	CostPerHourBefore float64
	CostPerHourAfter  float64
	Shortfalls        []Shortfall
	// Hazards is the preemption hazard (events per instance-hour) the planner estimated for each
	// spot offer it considered, by offer id, for explanation and dashboards.
	Hazards map[string]float64
}

// NeedsApproval lists the actions that wait for a person.
func (p Decision) NeedsApproval() []Action {
	var out []Action
	for _, a := range p.Actions {
		if a.NeedsApproval {
			out = append(out, a)
		}
	}
	return out
}
