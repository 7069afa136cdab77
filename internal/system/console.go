package system

import (
	"context"
	"errors"

	"github.com/bursar-dev/bursar/internal/console"
	"github.com/bursar-dev/bursar/internal/slack"
)

// ConsoleApprovals is the console's adapter over the approvals Slack also serves: the console
// lists the same pending requests and decides them through the same rules as a click
// (slack.Approvals.DecideAs), so a hold decided on either shows as decided on both.
type ConsoleApprovals struct{ A *slack.Approvals }

// Open lists the requests pending now as the console shows them.
func (c ConsoleApprovals) Open() []console.Hold {
	open := c.A.Open()
	out := make([]console.Hold, len(open))
	for i, o := range open {
		out[i] = console.Hold{Plan: o.Plan, Workload: o.Workload, Approvers: o.Approvers, Deadline: o.Deadline,
			Before: o.USDPerHourWas, After: o.USDPerHourNow, Reasons: o.Reasons}
	}
	return out
}

// Decide answers plan as who; Slack's refusals are given the console's meaning, with Slack's
// text, which says why.
func (c ConsoleApprovals) Decide(ctx context.Context, plan string, approve bool, who string) error {
	err := c.A.DecideAs(ctx, plan, approve, who)
	for _, m := range []struct{ slack, console error }{
		{slack.ErrNotApprover, console.ErrNotApprover},
		{slack.ErrTimedOut, console.ErrTimedOut},
		{slack.ErrNoPending, console.ErrNotPending},
	} {
		if errors.Is(err, m.slack) {
			return refusal{kind: m.console, err: err}
		}
	}
	return err
}

// refusal is a decision Slack's rules refused: it is the console's kind of refusal, and reads as
// Slack's error.
type refusal struct{ kind, err error }

func (r refusal) Error() string   { return r.err.Error() }
func (r refusal) Unwrap() []error { return []error{r.kind, r.err} }
