package arbiter

import (
	"context"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// Clock tells the time. The arbiter reads it for planning and event times, never time.Now
// directly, so tests and the demo can drive time. time.Now is read only where real time is
// meant, not the fleet's: the lease's TTL (lease.go: the bucket and the other arbiters keep real
// time), the start of a lookback on a stream (follow.go, budgetgate.go: the server stamps each
// message with its own clock), and what metrics and logs measure (a pass's duration in plan.go,
// the books' write in save.go, a reclaim's reaction time from Action.Received in follow.go and
// exec.go).
type Clock interface{ Now() time.Time }

// WallClock is the real time, in UTC: the Clock of everything that runs for real.
type WallClock struct{}

func (WallClock) Now() time.Time { return time.Now().UTC() }

// Proposal is what one planning pass wants to do, put to a gate as a whole, so that a budget
// judges the net change of a plan (a move's launch with the saving of the replica it replaces, a
// team's workloads together) rather than one action at a time.
type Proposal struct {
	At    time.Time
	Plans []WorkloadPlan
}

// WorkloadPlan is one workload's part of a pass: its new actions and what they change.
type WorkloadPlan struct {
	PlanID     string
	Workload   string
	Team       string
	Actions    []placement.Action
	CostBefore float64 // the workload's spend per hour now
	// Replaced are, by launch action id, the replicas a launch takes the place of: a move's old
	// replica (drained once the new one is ready, make-before-break) or a reclaimed one (gone at
	// its deadline). Their saving belongs to the launch.
	Replaced map[string][]Rep
	// Restores are the ids of the launches that restore capacity the workload lost (Book.Lost),
	// up to what it had before: a budget that restores first applies them at once and tells its
	// approvers after.
	Restores []string
}

// Net is the change in spend per hour once the plan is carried out and the replaced replicas
// are gone.
func (p WorkloadPlan) Net() float64 {
	n := 0.0
	for _, a := range p.Actions {
		n += a.CostPerHour
		for _, r := range p.Replaced[a.ID] {
			n -= r.PricePerHour
		}
	}
	return n
}

// Ruling is a gate's answer on a proposal: the actions it drops, and the sets of actions that
// wait for an approval, each applied or dropped as a whole. Actions in neither go ahead; of
// those, the restores in Told are put to approvers after they are applied, to keep or go back on.
type Ruling struct {
	Blocked []string
	Holds   []Hold // the gate fills Actions, Reasons, Policies, Approvers and Timeout
	Told    []Hold // as Holds; their Actions are restores
}

// Gate reviews each pass's actions before they are applied: budget policies, approvals in Slack.
type Gate interface {
	Review(ctx context.Context, p Proposal) (Ruling, error)
}

// Asker is a Gate that asks people about its holds. The arbiter calls Ask once a hold is recorded,
// and for every hold in the books when it takes the lead, so a question outlives the arbiter that
// asked it. Ask must not block (it is called on the loop taking the lead) and asks each hold id
// once.
type Asker interface {
	Ask(ctx context.Context, h Hold)
}

// Caps provides the budget caps the planner must respect (spend per hour by scope).
type Caps interface {
	Caps(ctx context.Context) ([]placement.Budget, error)
}

// NoGate is the default gate: it holds the actions the planner marks as needing approval (a cut
// below a workload's minimum), one hold per workload with no timeout, until Decide is called.
type NoGate struct{}

// Review holds what the planner marks as needing approval and allows the rest.
func (NoGate) Review(_ context.Context, p Proposal) (Ruling, error) {
	var r Ruling
	for _, wp := range p.Plans {
		var h Hold
		for _, a := range wp.Actions {
			if a.NeedsApproval {
				h.Actions = append(h.Actions, a.ID)
			}
		}
		if len(h.Actions) > 0 {
			h.Reasons = []string{"cutting " + wp.Workload + " below its minimum needs an approval"}
			r.Holds = append(r.Holds, h)
		}
	}
	return r, nil
}

// NoCaps is the default: no budget caps.
type NoCaps struct{}

// Caps returns none.
func (NoCaps) Caps(context.Context) ([]placement.Budget, error) { return nil, nil }
