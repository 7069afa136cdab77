package console

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Approvals is what the console needs of the approvals that Slack also serves: the holds pending
// now, and a decision taken under the same rules as a click on the Slack message (approver check,
// deadline, first decision wins, same audit). The arbiter's adapter over slack.Approvals
// implements it; report serve, which decides nothing, passes none.
type Approvals interface {
	// Open lists the holds pending now.
	Open() []Hold
	// Decide approves or rejects plan as who (a Slack user id, or an e-mail Slack resolves). Its
	// errors wrap ErrNotApprover, ErrNotPending or ErrTimedOut when the decision was refused and
	// nothing changed.
	Decide(ctx context.Context, plan string, approve bool, who string) error
}

// Hold is one plan waiting for an approver.
type Hold struct {
	Plan, Workload string
	// Approvers are the Slack user or group ids (or e-mails) that may decide it.
	Approvers []string
	// Deadline is when the hold counts as rejected if nobody decides.
	Deadline time.Time
	// Before and After are the workload's $/h before and after the plan.
	Before, After float64
	Reasons       []string
}

// The refusals Decide's errors wrap. The page and the API show the error's text, which says why.
var (
	// ErrNotApprover: who is not among the hold's approvers.
	ErrNotApprover = errors.New("not an approver of this plan")
	// ErrNotPending: the plan is no longer waiting (decided already, timed out, or unknown).
	ErrNotPending = errors.New("the plan is not pending approval")
	// ErrTimedOut: the hold's deadline passed before this decision; no answer in time is no.
	ErrTimedOut = errors.New("the hold's deadline passed")
)

// listed reports whether who is named among the hold's approvers. The page offers Approve and
// Reject only then; Decide still checks (a group id may hold who too), so this only hides
// buttons that would be refused.
func (h Hold) listed(who string) bool {
	return who != "" && slices.Contains(h.Approvers, who)
}
