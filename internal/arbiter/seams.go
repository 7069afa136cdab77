package arbiter

import (
	"context"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// Clock tells the time. The arbiter reads it for planning and event times, never time.Now
// directly, so tests and the demo can drive time.
type Clock interface{ Now() time.Time }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now().UTC() }

// Verdict is a gate's answer on one proposed action.
type Verdict string

// The verdicts a Gate can give.
const (
	Allow   Verdict = "allow"   // apply it now
	Pending Verdict = "pending" // hold it until Approve or Reject is called
	Block   Verdict = "block"   // drop it (a policy forbids it)
)

// Proposal is one action put to a gate, with what it costs.
type Proposal struct {
	Workload    string
	Team        string
	Action      placement.Action
	CostBefore  float64 // the workload's spend per hour now
	CostPerHour float64 // the change the action makes
}

// Gate reviews actions before they are applied: budget policies, approvals in Slack. It is the
// seam for issue 8; the default allows everything except actions the planner itself marks as
// needing approval, which wait for Approve.
type Gate interface {
	Review(ctx context.Context, p Proposal) (Verdict, error)
}

// Caps provides the budget caps the planner must respect (spend per hour by scope).
type Caps interface {
	Caps(ctx context.Context) ([]placement.Budget, error)
}

// NoGate is the default gate.
type NoGate struct{}

// Review allows everything that does not need approval.
func (NoGate) Review(_ context.Context, p Proposal) (Verdict, error) {
	if p.Action.NeedsApproval {
		return Pending, nil
	}
	return Allow, nil
}

// NoCaps is the default: no budget caps.
type NoCaps struct{}

// Caps returns none.
func (NoCaps) Caps(context.Context) ([]placement.Budget, error) { return nil, nil }
