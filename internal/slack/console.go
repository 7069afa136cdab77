package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// viaConsole marks, in the audit trail and on the Slack message, a decision taken outside Slack.
const viaConsole = "via console"

// Open is a request waiting for its answer, as the console lists it.
type Open struct {
	Plan      string
	Workload  string
	Approvers []string // Slack user (U…, W…) or user group (S…) ids
	Policies  []string
	Reasons   []string
	Deadline  time.Time
	// USDPerHourWas and USDPerHourNow are the plan's cost per hour before and after.
	USDPerHourWas, USDPerHourNow float64
	// Restored: the request asks after the fact whether to go back on a restore (approve goes
	// back, reject keeps it).
	Restored bool
}

// Open lists the requests still open to an answer, soonest deadline first. One past its
// deadline is left out even before the sweep rejects it: an answer would find it timed out.
func (a *Approvals) Open() []Open {
	now := a.now()
	a.mu.Lock()
	var out []Open
	for id, p := range a.pending {
		if !now.Before(p.deadline) {
			continue
		}
		r := p.req
		out = append(out, Open{Plan: id, Workload: r.Plan.Workload, Approvers: slices.Clone(r.Approvers),
			Policies: slices.Clone(r.Policies), Reasons: slices.Clone(r.Reasons), Deadline: p.deadline,
			USDPerHourWas: r.Plan.USDPerHourWas, USDPerHourNow: r.Plan.USDPerHourNow, Restored: r.Restored})
	}
	a.mu.Unlock()
	slices.SortFunc(out, func(x, y Open) int {
		return cmp.Or(x.Deadline.Compare(y.Deadline), strings.Compare(x.Plan, y.Plan))
	})
	return out
}

// DecideAs answers request plan outside Slack (the console) under the rules a click follows:
// it must be pending, before its deadline (after it, it is timed out now), and who must be a
// listed approver or a member of a listed group; the first decision wins, is applied
// (OnDecision), published with who and "via console", and shown on the Slack message. who is a
// Slack user id, or an e-mail Slack resolves to one. approve approves what the request asks:
// the plan, or for a restore, going back on it.
func (a *Approvals) DecideAs(ctx context.Context, plan string, approve bool, who string) error {
	p := a.get(plan)
	if p == nil {
		return fmt.Errorf("plan %s: %w", plan, ErrNoPending)
	}
	user, err := a.slackUser(ctx, who)
	if err != nil {
		return fmt.Errorf("plan %s: %w", plan, err)
	}
	return a.answer(ctx, plan, p, approve, user, viaConsole)
}

// slackUser is who as a Slack user id: an e-mail is looked up (users.lookupByEmail); anything
// else is taken as an id. An e-mail no Slack user has is not an approver; a lookup that fails
// otherwise says so, so that a person tries again rather than thinking they are not listed.
func (a *Approvals) slackUser(ctx context.Context, who string) (string, error) {
	who = strings.TrimSpace(who)
	if who == "" {
		return "", fmt.Errorf("no identity given: %w", ErrNotApprover)
	}
	if !strings.Contains(who, "@") {
		return who, nil
	}
	users, ok := a.api.(userLookup)
	if !ok {
		return "", fmt.Errorf("no slack to resolve the e-mail %s; give the Slack user id instead: %w", who, ErrNotApprover)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	u, err := users.GetUserByEmailContext(ctx, who)
	var serr slack.SlackErrorResponse
	switch {
	case errors.As(err, &serr) && serr.Err == "users_not_found":
		return "", fmt.Errorf("no slack user has the e-mail %s: %w", who, ErrNotApprover)
	case err != nil:
		return "", fmt.Errorf("looking up the slack user with e-mail %s (try again): %w", who, err)
	case u == nil || u.ID == "":
		return "", fmt.Errorf("slack names no user for the e-mail %s: %w", who, ErrNotApprover)
	}
	return u.ID, nil
}
