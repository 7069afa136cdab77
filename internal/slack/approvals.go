package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
)

// Publisher publishes events; *bus.Publisher is one.
type Publisher interface {
	Publish(ctx context.Context, e events.Event) error
}

// Button action ids on approval messages, and on the messages asking after a restore whether to
// keep it (Keep rejects the go-back the message asks about) or go back (approves it).
const (
	ActionApprove = "bursar_approve"
	ActionReject  = "bursar_reject"
	ActionKeep    = "bursar_keep"
	ActionGoBack  = "bursar_go_back"
)

// Why an interaction did not decide anything.
var (
	ErrNotApprover = errors.New("user is not an approver of this plan")
	ErrNoPending   = errors.New("no approval is pending for this plan (decided, timed out or unknown)")
	ErrNotAButton  = errors.New("interaction is not a Bursar approval button")
	ErrTimedOut    = errors.New("the request timed out before this answer (no answer in time is no)")
)

// Request asks for a person's approval of a plan.
type Request struct {
	Plan      events.PlanDecided
	Reasons   []string
	Policies  []string
	Approvers []string // Slack user (U…, W…) or user group (S…) ids
	Timeout   time.Duration
	// Deadline, when set, is when the request times out: the timeout counted from the first ask,
	// for a request asked again after a restart. Zero: Timeout from now.
	Deadline time.Time
	// Posted, when set, is the message already asking: the request is resumed, not posted again.
	Posted Posted
	// Workloads names each action's workload where the plan spans several (by action id);
	// actions not listed belong to Plan.Workload.
	Workloads map[string]string
	// Restored asks after the fact: restores of lost capacity were applied at once, and the plan's
	// actions that need an approval are their go-backs. Its buttons are Keep and Go back; no
	// answer by the deadline keeps the restores.
	Restored bool
}

// Posted is where an approval message is, so that a restarted arbiter can resume it.
type Posted struct {
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
}

// Decision is the outcome of a request: approved or rejected, by whom (a Slack user id, or
// "timeout") and when.
type Decision struct {
	Plan   events.PlanDecided
	Status events.ActionStatus // approved or rejected
	Actor  string
	At     time.Time
	Detail string
}

// pending is a request waiting for its answer. Its post may still be on its way: posting is
// closed once Slack answered it (postErr says how), and until then channel and ts are unknown
// unless a click on the message told them. Fields that change are guarded by Approvals.mu.
type pending struct {
	req      Request
	channel  string
	ts       string
	deadline time.Time
	posting  chan struct{} // nil for a resumed request
	postErr  error
	decided  *Decision // set when decided before its post was answered: the late answer shows it
}

// postWait bounds a post that outlives the Ask that started it: Slack may take the message and
// answer late, after the caller's deadline, and that answer is what makes a retry find the
// message instead of posting a second one.
const postWait = 2 * callTimeout

// Approvals posts approval requests and turns the answers into decisions. Every step is published
// as action.updated (awaiting_approval, then approved or rejected, with who and when) for each
// action concerned, so the FLEET stream and ClickHouse hold the audit trail. Pending requests live
// in memory: after a restart the arbiter re-plans and asks again.
type Approvals struct {
	api     chatAPI
	channel string
	pub     Publisher
	now     func() time.Time
	log     *slog.Logger
	// OnDecision, when set, applies each decision before it is published: the arbiter applies
	// an approved plan there. An error says it could not be applied now (this arbiter does not
	// lead, or not for a moment, or the plan is gone): nothing is published, the message stays
	// as it is and the request stays pending, so a later click or sweep decides it here (the
	// arbiter that leads by then applies it, or answers ErrNoHold once it was settled elsewhere).
	OnDecision func(context.Context, Decision) error

	mu      sync.Mutex
	pending map[string]*pending // by plan id
}

// NewApprovals returns approvals posting to channel, publishing to pub and reading time from now.
func NewApprovals(api chatAPI, channel string, pub Publisher, now func() time.Time, log *slog.Logger) *Approvals {
	return &Approvals{api: api, channel: channel, pub: pub, now: now, log: log, pending: map[string]*pending{}}
}

// Ask posts the request unless one for the same plan is pending (plans are re-sent every cycle
// with the same id), and returns where the message is. A request that was posted before (Posted
// set) is resumed: it is pending again, with its deadline, and its buttons count, but nothing is
// posted or published again.
//
// A post Slack has not answered when ctx ends is not given up: the message may be in the channel
// already (a slow Slack takes it and answers late). Ask returns an error, the request stays
// pending, its buttons count (a click tells where the message is), and an Ask again for the plan
// waits for that post's answer instead of posting the question a second time. A post Slack
// refuses is dropped, and the next Ask posts again.
func (a *Approvals) Ask(ctx context.Context, req Request) (Posted, error) {
	id := req.Plan.PlanID
	a.mu.Lock()
	if old, dup := a.pending[id]; dup {
		a.mu.Unlock()
		return a.waitPosted(ctx, id, old)
	}
	if req.Timeout <= 0 {
		req.Timeout = budget.DefaultApprovalTimeout
	}
	p := &pending{req: req, deadline: req.Deadline, channel: req.Posted.Channel, ts: req.Posted.TS}
	if p.deadline.IsZero() {
		p.deadline = a.now().Add(req.Timeout)
	}
	if p.ts == "" {
		p.posting = make(chan struct{})
	}
	a.pending[id] = p
	a.mu.Unlock()
	if p.posting == nil {
		a.log.Info("approval request resumed", "plan", id, "deadline", p.deadline)
		return Posted{Channel: p.channel, TS: p.ts}, nil
	}
	go a.post(context.WithoutCancel(ctx), id, p)
	return a.waitPosted(ctx, id, p)
}

// post posts p's question, bounded by postWait whatever the Ask's deadline, and keeps Slack's
// answer: where the message is, or why it was refused (the request is then dropped).
func (a *Approvals) post(ctx context.Context, id string, p *pending) {
	ctx, cancel := context.WithTimeout(ctx, postWait)
	defer cancel()
	ch, ts, err := a.api.PostMessageContext(ctx, a.channel, slack.MsgOptionText(askText(p.req), false),
		slack.MsgOptionBlocks(approvalBlocks(p, nil)...))
	a.mu.Lock()
	if err != nil {
		p.postErr = fmt.Errorf("asking slack channel %s to approve plan %s: %w", a.channel, id, err)
		if a.pending[id] == p {
			delete(a.pending, id)
		}
	} else if p.ts == "" {
		p.channel, p.ts = ch, ts
	}
	live, d := a.pending[id] == p, p.decided
	a.mu.Unlock()
	defer close(p.posting) // once announced, so an Ask that returns finds the request announced
	switch {
	case err != nil:
	case live:
		if err := a.publish(ctx, p.req, events.ActionAwaitingApproval, "bursar", a.now(), strings.Join(p.req.Reasons, "; ")); err != nil {
			a.log.Warn("announcing an approval request", "plan", id, "err", err)
		}
	case d != nil: // decided while its post was on its way: show the outcome on it now
		a.show(ctx, id, p, *d)
	}
}

// waitPosted waits for p's post to be answered, until ctx ends, and says where the message is.
func (a *Approvals) waitPosted(ctx context.Context, id string, p *pending) (Posted, error) {
	if p.posting != nil {
		select {
		case <-p.posting:
		case <-ctx.Done():
			return Posted{}, fmt.Errorf("asking slack channel %s to approve plan %s: no answer yet; the request stays pending and a retry waits for this post: %w",
				a.channel, id, ctx.Err())
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.postErr != nil {
		return Posted{}, p.postErr
	}
	return Posted{Channel: p.channel, TS: p.ts}, nil
}

// Pending lists the plan ids waiting for an answer.
func (a *Approvals) Pending() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ids []string
	for id := range a.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Handle takes a button click. Only a listed approver (directly or through a listed user group)
// decides; anyone else is told so privately and nothing changes. A click after the request's
// deadline finds it timed out (rejected), whether or not the sweep has come by yet.
func (a *Approvals) Handle(ctx context.Context, cb slack.InteractionCallback) error {
	act, ok := button(cb)
	if !ok {
		return ErrNotAButton
	}
	id, user := act.Value, cb.User.ID
	a.mu.Lock()
	p := a.pending[id]
	a.mu.Unlock()
	if p == nil {
		a.tell(ctx, cb, "This approval is no longer pending: it was decided or timed out.")
		return fmt.Errorf("plan %s: %w", id, ErrNoPending)
	}
	approve, fits := decision(act.ActionID, p.req.Restored)
	if !fits {
		return fmt.Errorf("plan %s, button %s: %w", id, act.ActionID, ErrNotAButton)
	}
	a.locate(p, cb)
	err := a.answer(ctx, id, p, approve, user, "")
	switch {
	case errors.Is(err, ErrTimedOut):
		a.tell(ctx, cb, timedOut(p.req))
	case errors.Is(err, ErrNotApprover):
		a.tell(ctx, cb, "Only the budget's approvers can decide on this plan.")
	case err != nil && !errors.Is(err, ErrNoPending):
		a.tell(ctx, cb, "Bursar could not apply this decision here; nothing changed. Try again in a minute.")
	}
	return err
}

// answer applies user's answer to request id, pending as p: the rules a Slack click and the
// console share. Past its deadline the request is timed out (rejected now if the sweep has not
// come by: no answer in time is no); a listed approver's answer decides it (first decision wins);
// anyone else's changes nothing. detail goes to the audit trail with the decision.
func (a *Approvals) answer(ctx context.Context, id string, p *pending, approve bool, user, detail string) error {
	if !a.now().Before(p.deadline) {
		a.expire(ctx, id, p)
		return fmt.Errorf("plan %s: deadline %s passed: %w", id, p.deadline.UTC().Format(time.RFC3339), ErrTimedOut)
	}
	if !a.mayApprove(ctx, p.req.Approvers, user) {
		return fmt.Errorf("plan %s, user %s: %w", id, user, ErrNotApprover)
	}
	status := events.ActionRejected
	if approve {
		status = events.ActionApproved
	}
	return a.decide(ctx, id, status, user, detail)
}

// Sweep rejects every request whose timeout passed: no answer in time means no.
func (a *Approvals) Sweep(ctx context.Context) {
	now := a.now()
	a.mu.Lock()
	var late []string
	for id, p := range a.pending {
		if !now.Before(p.deadline) {
			late = append(late, id)
		}
	}
	a.mu.Unlock()
	slices.Sort(late)
	for _, id := range late {
		if p := a.get(id); p != nil {
			a.expire(ctx, id, p)
		}
	}
}

// expire rejects request id, pending as p, as timed out.
func (a *Approvals) expire(ctx context.Context, id string, p *pending) {
	detail := fmt.Sprintf("no answer within %s", p.req.Timeout)
	if err := a.decide(ctx, id, events.ActionRejected, "timeout", detail); err != nil && !errors.Is(err, ErrNoPending) {
		a.log.Warn("rejecting a timed-out approval", "plan", id, "err", err)
	}
}

// Run sweeps for timed-out requests every interval until ctx ends.
func (a *Approvals) Run(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			a.Sweep(ctx)
		}
	}
}

func (a *Approvals) get(id string) *pending {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pending[id]
}

// decide settles a pending request once: the first decision wins, later clicks find nothing.
// The decision is applied (OnDecision) first, then published and shown on the message.
func (a *Approvals) decide(ctx context.Context, id string, status events.ActionStatus, actor, detail string) error {
	a.mu.Lock()
	p := a.pending[id]
	delete(a.pending, id)
	a.mu.Unlock()
	if p == nil {
		return fmt.Errorf("plan %s: %w", id, ErrNoPending)
	}
	d := Decision{Plan: p.req.Plan, Status: status, Actor: actor, At: a.now().UTC(), Detail: detail}
	if a.OnDecision != nil {
		if err := a.OnDecision(ctx, d); err != nil {
			a.mu.Lock()
			if _, again := a.pending[id]; !again { // asked again meanwhile: that one stands
				a.pending[id] = p
			}
			a.mu.Unlock()
			return fmt.Errorf("plan %s %s by %s was not applied: %w", id, status, actor, err)
		}
	}
	err := a.publish(ctx, p.req, status, actor, d.At, detail)
	a.mu.Lock()
	known := p.ts != ""
	if !known {
		p.decided = &d // the post's late answer shows it
	}
	a.mu.Unlock()
	if known {
		a.show(ctx, id, p, d)
	}
	a.log.Info("approval decided", "plan", id, "workload", p.req.Plan.Workload, "status", status, "actor", actor)
	return err
}

// show updates the approval message with its outcome.
func (a *Approvals) show(ctx context.Context, id string, p *pending, d Decision) {
	a.mu.Lock()
	ch, ts := p.channel, p.ts
	a.mu.Unlock()
	if _, _, _, err := a.api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText(decidedText(p, d), false),
		slack.MsgOptionBlocks(approvalBlocks(p, &d)...)); err != nil {
		a.log.Warn("updating the approval message", "plan", id, "err", err)
	}
}

// locate learns where p's message is from a click on it, while its post is not answered yet: the
// click proves the message is in the channel.
func (a *Approvals) locate(p *pending, cb slack.InteractionCallback) {
	ch, ts := cmp.Or(cb.Container.ChannelID, cb.Channel.ID), cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp)
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.ts == "" && ts != "" {
		p.channel, p.ts = ch, ts
	}
}

// mayApprove: the user is listed, or is a member of a listed user group.
func (a *Approvals) mayApprove(ctx context.Context, approvers []string, user string) bool {
	if user == "" {
		return false
	}
	for _, ap := range approvers {
		if ap == user {
			return true
		}
	}
	for _, ap := range approvers {
		if !strings.HasPrefix(ap, "S") {
			continue
		}
		members, err := a.api.GetUserGroupMembersContext(ctx, ap)
		if err != nil {
			a.log.Warn("reading slack user group members; its members cannot approve now", "group", ap, "err", err)
			continue
		}
		if slices.Contains(members, user) {
			return true
		}
	}
	return false
}

// tell answers the clicking user privately; failing to do so changes nothing else.
func (a *Approvals) tell(ctx context.Context, cb slack.InteractionCallback, text string) {
	ch := cb.Channel.ID
	if ch == "" {
		ch = cb.Container.ChannelID
	}
	if _, err := a.api.PostEphemeralContext(ctx, ch, cb.User.ID, slack.MsgOptionText(text, false)); err != nil {
		a.log.Warn("telling a slack user why their click did nothing", "user", cb.User.ID, "err", err)
	}
}

// concerned are the actions an approval is about: those marked as needing one, else all.
func concerned(plan events.PlanDecided) []events.PlanAction {
	var out []events.PlanAction
	for _, act := range plan.Actions {
		if act.NeedsApproval {
			out = append(out, act)
		}
	}
	if out == nil {
		return plan.Actions
	}
	return out
}

// publish sends one action.updated per action concerned. The event id names the action and the
// step only (as the arbiter's own step events do), so the same step published by both is kept once.
func (a *Approvals) publish(ctx context.Context, req Request, status events.ActionStatus, actor string, at time.Time, detail string) error {
	plan := req.Plan
	var errs []error
	for _, act := range concerned(plan) {
		w := plan.Workload
		if o, ok := req.Workloads[act.ID]; ok {
			w = o
		}
		e := &events.ActionUpdated{Meta: events.Meta{At: at.UTC()}, Workload: w, ActionID: act.ID,
			PlanID: plan.PlanID, Status: status, Kind: act.Kind, Location: act.Location, Offer: act.Offer,
			Market: act.Market, Replicas: act.Replicas, Reason: act.Reason, Actor: actor, Detail: detail}
		e.ID = events.ID(&events.ActionUpdated{Workload: w, ActionID: act.ID, Status: status})
		if err := a.pub.Publish(ctx, events.Stamp(e)); err != nil {
			errs = append(errs, fmt.Errorf("publishing %s of action %s: %w", status, act.ID, err))
		}
	}
	return errors.Join(errs...)
}

// button finds the approval button in a block_actions callback.
func button(cb slack.InteractionCallback) (*slack.BlockAction, bool) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return nil, false
	}
	for _, act := range cb.ActionCallback.BlockActions {
		if slices.Contains([]string{ActionApprove, ActionReject, ActionKeep, ActionGoBack}, act.ActionID) && act.Value != "" {
			return act, true
		}
	}
	return nil, false
}

// decision reads a button: whether it approves what the message asks about, and whether it is
// one of that message's buttons (Approve or Reject on a question before the fact, Keep or Go back
// on one after a restore).
func decision(button string, restored bool) (approve, fits bool) {
	if restored {
		return button == ActionGoBack, button == ActionGoBack || button == ActionKeep
	}
	return button == ActionApprove, button == ActionApprove || button == ActionReject
}
