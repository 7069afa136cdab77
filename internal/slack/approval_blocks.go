package slack

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/events"
)

func askText(req Request) string {
	if req.Restored {
		return fmt.Sprintf("Restored at once: %s, %.2f → %.2f USD/h; keep it or go back?", req.Plan.Workload,
			req.Plan.USDPerHourWas, req.Plan.USDPerHourNow)
	}
	return fmt.Sprintf("Approval needed: plan for %s, %.2f → %.2f USD/h", req.Plan.Workload,
		req.Plan.USDPerHourWas, req.Plan.USDPerHourNow)
}

func decidedText(p *pending, d Decision) string {
	if p.req.Restored {
		what := map[events.ActionStatus]string{events.ActionApproved: "gone back on", events.ActionRejected: "kept"}[d.Status]
		return fmt.Sprintf("Restore for %s %s by %s", p.req.Plan.Workload, what, d.Actor)
	}
	return fmt.Sprintf("Plan for %s %s by %s", p.req.Plan.Workload, d.Status, d.Actor)
}

// timedOut tells a click after the deadline what came of the question.
func timedOut(req Request) string {
	if req.Restored {
		return "This question had timed out before your click: the restore was kept."
	}
	return "This approval had timed out before your click: the plan was rejected."
}

// mention writes an approver so Slack shows a name: <@U…> for users, <!subteam^S…> for groups.
func mention(id string) string {
	if strings.HasPrefix(id, "S") {
		return "<!subteam^" + id + ">"
	}
	return "<@" + id + ">"
}

// approvalBlocks is the approval message: the plan, its cost per hour before and after, the
// reasons, who may decide and by when, then either the buttons or, once decided, the outcome.
func approvalBlocks(p *pending, d *Decision) []slack.Block {
	plan := p.req.Plan
	delta := plan.USDPerHourNow - plan.USDPerHourWas
	approvers := make([]string, len(p.req.Approvers))
	for i, a := range p.req.Approvers {
		approvers[i] = mention(a)
	}
	who := strings.Join(approvers, " ")
	if who == "" {
		who = "nobody is listed: this plan will time out"
	}
	var lines []string
	for _, a := range plan.Actions {
		mark := ""
		if a.NeedsApproval {
			mark = " *(needs approval)*"
		}
		lines = append(lines, fmt.Sprintf("• %s %s → %d replicas (%+d) on %s at %s, %s%s", a.Kind,
			escape(plan.Workload), a.Replicas, a.Delta, escape(a.Offer), escape(a.Location), escape(a.Reason), mark))
	}
	reasons := make([]string, len(p.req.Reasons))
	for i, r := range p.req.Reasons {
		reasons[i] = "• " + escape(r)
	}
	title, cost, until := "Approval needed: ", "Cost per hour", " (then rejected)"
	yes, no := slack.NewButtonBlockElement(ActionApprove, plan.PlanID, plain("Approve")),
		slack.NewButtonBlockElement(ActionReject, plan.PlanID, plain("Reject"))
	if p.req.Restored { // asked after the fact: the restore stands unless someone goes back on it
		title, cost, until = "Restored at once: ", "Restoring added per hour", " (then kept)"
		yes, no = slack.NewButtonBlockElement(ActionKeep, plan.PlanID, plain("Keep")),
			slack.NewButtonBlockElement(ActionGoBack, plan.PlanID, plain("Go back"))
	}
	bs := []slack.Block{
		header(title + plan.Workload),
		section(strings.Join(reasons, "\n")),
		fields(cost, fmt.Sprintf("%.2f → %.2f USD (%+.2f)", plan.USDPerHourWas, plan.USDPerHourNow, delta),
			"Budgets", escape(strings.Join(p.req.Policies, ", ")),
			"Approvers", who,
			"Decide by", when(p.deadline)+until),
		section("*Plan*\n" + strings.Join(lines, "\n")),
	}
	if d == nil {
		bs = append(bs, slack.NewActionBlock("bursar_approval", withStyle(yes, slack.StylePrimary), withStyle(no, slack.StyleDanger)))
	} else {
		bs = append(bs, section(outcome(d, p.req.Restored)))
	}
	return append(bs, note("plan "+plan.PlanID))
}

func withStyle(b *slack.ButtonBlockElement, s slack.Style) *slack.ButtonBlockElement {
	b.Style = s
	return b
}

// outcome is the line that replaces the buttons once decided; a decision taken outside Slack
// says where (the audit's detail).
func outcome(d *Decision, restored bool) string {
	if d.Actor != "timeout" && d.Detail != "" {
		return decidedLine(d, restored) + " (" + escape(d.Detail) + ")"
	}
	return decidedLine(d, restored)
}

func decidedLine(d *Decision, restored bool) string {
	switch {
	case restored && d.Status == events.ActionApproved:
		return fmt.Sprintf(":leftwards_arrow_with_hook: *Gone back* by %s at %s", mention(d.Actor), when(d.At))
	case restored && d.Actor == "timeout":
		return fmt.Sprintf(":hourglass: *Kept*: %s (%s)", escape(d.Detail), when(d.At))
	case restored:
		return fmt.Sprintf(":white_check_mark: *Kept* by %s at %s", mention(d.Actor), when(d.At))
	case d.Status == events.ActionApproved:
		return fmt.Sprintf(":white_check_mark: *Approved* by %s at %s", mention(d.Actor), when(d.At))
	case d.Actor == "timeout":
		return fmt.Sprintf(":hourglass: *Rejected*: %s (%s)", escape(d.Detail), when(d.At))
	default:
		return fmt.Sprintf(":x: *Rejected* by %s at %s", mention(d.Actor), when(d.At))
	}
}
