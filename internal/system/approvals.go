package system

import (
	"context"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// SlackApprovals is the Slack adapter of the arbiter's approvals port: it posts a hold's question
// as a Slack request (the button carries the hold id; a hold already posted is resumed with its
// message and its first deadline) and, once answered, hands the decision to the budgets.
type SlackApprovals struct{ *slack.Approvals }

// NewSlackApprovals adapts a.
func NewSlackApprovals(a *slack.Approvals) SlackApprovals { return SlackApprovals{a} }

// Ask posts (or resumes) the question of hold h.
func (a SlackApprovals) Ask(ctx context.Context, h arbiter.Hold) (arbiter.Message, error) {
	at, err := a.Approvals.Ask(ctx, slack.Request{Plan: h.Plan, Reasons: h.Reasons, Policies: h.Policies,
		Approvers: h.Approvers, Timeout: h.Timeout, Deadline: h.Deadline,
		Posted: slack.Posted{Channel: h.Channel, TS: h.TS}, Workloads: h.Owners, Restored: h.Restored})
	return arbiter.Message{Channel: at.Channel, TS: at.TS}, err
}

// Answer hands the decisions Slack receives to b.
func (a SlackApprovals) Answer(b *arbiter.Budgets) {
	a.OnDecision = func(ctx context.Context, d slack.Decision) error {
		return b.Decided(ctx, d.Plan.PlanID, d.Status == events.ActionApproved, d.Actor)
	}
}
