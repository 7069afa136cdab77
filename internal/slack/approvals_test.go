package slack

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

func ask(t *testing.T, r *rig, id string, approvers ...string) {
	t.Helper()
	req := Request{Plan: plan(id), Reasons: []string{`budget "llm-daily": cutting llm below its minimum needs an approval`},
		Policies: []string{"llm-daily"}, Approvers: approvers, Timeout: 30 * time.Minute}
	if _, err := r.approvals.Ask(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

func statuses(us []*events.ActionUpdated) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.PlanID+":"+string(u.Status)+":"+u.Actor)
	}
	return out
}

func TestApprovalFlow(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.slack.SetGroup("S0FINOPS", "U0GROUPIE")

	ask(t, r, "plan-1", "U0APPROVER", "S0FINOPS")
	ask(t, r, "plan-1", "U0APPROVER", "S0FINOPS") // re-sent next cycle: no second message
	msgs := r.slack.WaitFor(t, 1)
	if len(msgs) != 1 || msgs[0].Method != "chat.postMessage" || msgs[0].Channel != channel {
		t.Fatalf("messages = %+v", msgs)
	}
	if got, want := buttons(t, msgs[0]), []string{"bursar_approve=plan-1", "bursar_reject=plan-1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("buttons = %v, want %v", got, want)
	}
	for _, want := range []string{"94.20 → 60.00 USD (-34.20)", "cutting llm below its minimum", "<@U0APPROVER> <!subteam^S0FINOPS>", "(needs approval)"} {
		if !strings.Contains(texts(t, msgs[0]), want) {
			t.Errorf("approval message lacks %q:\n%s", want, msgs[0].Blocks)
		}
	}

	// A non-approver's click is refused privately and changes nothing.
	if code := r.click("U0RANDOM", ActionApprove, "plan-1"); code != http.StatusOK {
		t.Errorf("non-approver click: HTTP %d, want 200 (the request is genuine)", code)
	}
	msgs = r.slack.WaitFor(t, 2)
	if msgs[1].Method != "chat.postEphemeral" || msgs[1].User != "U0RANDOM" {
		t.Errorf("non-approver was not told: %+v", msgs[1])
	}
	if got := r.approvals.Pending(); !reflect.DeepEqual(got, []string{"plan-1"}) {
		t.Errorf("pending = %v after a non-approver click", got)
	}

	// The approver approves: published with who and when, message updated, arbiter told.
	r.clock.Add(2 * time.Minute)
	if code := r.click("U0APPROVER", ActionApprove, "plan-1"); code != http.StatusOK {
		t.Fatalf("approver click: HTTP %d", code)
	}
	msgs = r.slack.WaitFor(t, 3)
	if m := msgs[2]; m.Method != "chat.update" || m.TS != msgs[0].TS || !strings.Contains(texts(t, m), "*Approved* by <@U0APPROVER>") || len(buttons(t, m)) != 0 {
		t.Errorf("approval message not updated with the outcome: %+v", m)
	}
	if d := r.decided(); len(d) != 1 || d[0].Status != events.ActionApproved || d[0].Actor != "U0APPROVER" || !d[0].At.Equal(start.Add(2*time.Minute)) {
		t.Errorf("decisions = %+v", d)
	}
	// A second click finds nothing pending.
	r.click("U0APPROVER", ActionReject, "plan-1")

	// A member of an approver group decides too.
	ask(t, r, "plan-2", "U0APPROVER", "S0FINOPS")
	r.click("U0GROUPIE", ActionReject, "plan-2")

	// Nobody answers the third: rejected at the timeout.
	ask(t, r, "plan-3", "U0APPROVER")
	r.clock.Add(29 * time.Minute)
	r.approvals.Sweep(ctx)
	if got := r.approvals.Pending(); !reflect.DeepEqual(got, []string{"plan-3"}) {
		t.Fatalf("pending before the timeout = %v", got)
	}
	r.clock.Add(time.Minute)
	r.approvals.Sweep(ctx)
	if got := r.approvals.Pending(); len(got) != 0 {
		t.Errorf("pending after the timeout = %v", got)
	}
	last := r.slack.Messages()[len(r.slack.Messages())-1]
	if last.Method != "chat.update" || !strings.Contains(texts(t, last), "*Rejected*: no answer within 30m0s") {
		t.Errorf("timed-out message = %+v", last)
	}

	// Only plan actions needing approval are tracked, one event per step.
	want := []string{"plan-1:awaiting_approval:bursar", "plan-1:approved:U0APPROVER",
		"plan-2:awaiting_approval:bursar", "plan-2:rejected:U0GROUPIE",
		"plan-3:awaiting_approval:bursar", "plan-3:rejected:timeout"}
	us := r.updates()
	if got := statuses(us); !reflect.DeepEqual(got, want) {
		t.Errorf("action.updated = %v\nwant %v", got, want)
	}
	for _, u := range us {
		if err := events.Validate(u); err != nil || u.ActionID != u.PlanID+"-a1" {
			t.Errorf("update %+v: %v", u, err)
		}
	}
}

func TestRefusedRequestsChangeNothing(t *testing.T) {
	r := newRig(t)
	ask(t, r, "plan-1", "U0APPROVER")
	body := payload(t, "U0APPROVER", ActionApprove, "plan-1")
	now := r.clock.Now()

	// A genuine click by someone else, accepted once: the replay below must be refused.
	genuine := payload(t, "U0RANDOM", ActionApprove, "plan-1")
	if code := r.send(signed(genuine, testSecret, now)); code != http.StatusOK {
		t.Fatalf("genuine request: HTTP %d", code)
	}
	before := len(r.slack.WaitFor(t, 2))

	tampered := signed(body, testSecret, now)
	tampered.Header.Set("X-Slack-Signature", Sign(testSecret, now.Unix(), genuine))
	noHeaders := signed(body, testSecret, now)
	noHeaders.Header.Del("X-Slack-Signature")
	tests := []struct {
		name string
		req  func() *http.Request
		want string // logged reason
	}{
		{"forged with another secret", func() *http.Request { return signed(body, "not-the-secret", now) }, "signature does not match"},
		{"signature of another body", func() *http.Request { return tampered }, "signature does not match"},
		{"stale: six minutes old", func() *http.Request { return signed(body, testSecret, now.Add(-6*time.Minute)) }, "more than 5 minutes"},
		{"from the future", func() *http.Request { return signed(body, testSecret, now.Add(6*time.Minute)) }, "more than 5 minutes"},
		{"unsigned", func() *http.Request { return noHeaders }, "missing X-Slack-Signature"},
		{"replayed", func() *http.Request { return signed(genuine, testSecret, now) }, "already seen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := r.send(tt.req()); code != http.StatusUnauthorized {
				t.Errorf("HTTP %d, want 401", code)
			}
			if !strings.Contains(r.logs.String(), tt.want) {
				t.Errorf("log lacks %q:\n%s", tt.want, r.logs)
			}
		})
	}
	if n := len(r.slack.Messages()); n != before {
		t.Errorf("refused requests sent %d slack messages", n-before)
	}
	if got := r.approvals.Pending(); !reflect.DeepEqual(got, []string{"plan-1"}) {
		t.Errorf("pending = %v, want plan-1 still waiting", got)
	}
	if got := statuses(r.updates()); !reflect.DeepEqual(got, []string{"plan-1:awaiting_approval:bursar"}) {
		t.Errorf("action.updated = %v", got)
	}
	if len(r.decided()) != 0 {
		t.Error("a refused request decided something")
	}
}

func TestAskFailsWhenSlackRefuses(t *testing.T) {
	r := newRig(t)
	r.slack.FailNext("chat.postMessage", "channel_not_found")
	_, err := r.approvals.Ask(context.Background(), Request{Plan: plan("p"), Approvers: []string{"U0APPROVER"}})
	if err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Fatalf("err = %v", err)
	}
	if len(r.approvals.Pending()) != 0 || len(r.updates()) != 0 {
		t.Error("a request Slack never showed is pending or announced")
	}
	// The next cycle asks again and gets through.
	ask(t, r, "p", "U0APPROVER")
	if got := r.approvals.Pending(); !reflect.DeepEqual(got, []string{"p"}) {
		t.Errorf("pending = %v", got)
	}
}

// TestResumedRequestKeepsItsMessageAndDeadline: approvals restarted with a request's message and
// first deadline (as a new arbiter leader asks again) post nothing new, take the old message's
// buttons and time out when the first ask said, not a full timeout after the restart.
func TestResumedRequestKeepsItsMessageAndDeadline(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	req := Request{Plan: plan("plan-1"), Approvers: []string{"U0APPROVER"}, Timeout: 30 * time.Minute}
	at, err := r.approvals.Ask(ctx, req)
	if err != nil || at.TS == "" || at.Channel != channel {
		t.Fatalf("Ask = %+v, %v", at, err)
	}
	deadline := r.clock.Now().Add(30 * time.Minute)

	r.clock.Add(20 * time.Minute)
	fresh := NewApprovals(slack.New(testToken, slack.OptionAPIURL(r.slack.URL)), channel, bus.NewPublisher(r.env.JS),
		r.clock.Now, slog.New(slog.DiscardHandler))
	req.Deadline, req.Posted = deadline, at
	again, err := fresh.Ask(ctx, req)
	if err != nil || again != at {
		t.Fatalf("resumed Ask = %+v, %v; want %+v", again, err, at)
	}
	if n := len(r.slack.Messages()); n != 1 {
		t.Errorf("%d slack messages after resuming, want the first one only", n)
	}
	r.clock.Add(9 * time.Minute)
	fresh.Sweep(ctx)
	if got := fresh.Pending(); !reflect.DeepEqual(got, []string{"plan-1"}) {
		t.Fatalf("pending before the first deadline = %v", got)
	}
	r.clock.Add(time.Minute)
	fresh.Sweep(ctx)
	msgs := r.slack.Messages()
	if len(fresh.Pending()) != 0 || msgs[len(msgs)-1].Method != "chat.update" || msgs[len(msgs)-1].TS != at.TS {
		t.Errorf("at the first deadline: pending %v, last message %+v", fresh.Pending(), msgs[len(msgs)-1])
	}
	want := []string{"plan-1:awaiting_approval:bursar", "plan-1:rejected:timeout"}
	if got := statuses(r.updates()); !reflect.DeepEqual(got, want) {
		t.Errorf("action.updated = %v, want %v", got, want)
	}
}

// TestDecisionTheArbiterCannotApplyChangesNothing: when the arbiter refuses a decision (it does
// not lead, or not for a moment), nothing is published, the message keeps its buttons, the user is
// told, and the request stays pending: the click tried again once the arbiter can apply it
// decides (found by the soak: a timeout swept while the leader's lease lapsed for a moment was
// dropped, nobody asked again, and the hold's actions waited for ever, blocking the planner's
// launches).
func TestDecisionTheArbiterCannotApplyChangesNothing(t *testing.T) {
	r := newRig(t)
	r.refuse = errors.New("this arbiter does not lead")
	ask(t, r, "plan-1", "U0APPROVER")
	if code := r.click("U0APPROVER", ActionApprove, "plan-1"); code != http.StatusOK {
		t.Fatalf("click: HTTP %d", code)
	}
	msgs := r.slack.WaitFor(t, 2)
	if m := msgs[1]; m.Method != "chat.postEphemeral" || m.User != "U0APPROVER" || !strings.Contains(m.Text, "could not apply") {
		t.Errorf("the approver was not told: %+v", m)
	}
	for _, m := range r.slack.Messages() {
		if m.Method == "chat.update" {
			t.Errorf("the message was updated for a decision not applied: %+v", m)
		}
	}
	if got := statuses(r.updates()); !reflect.DeepEqual(got, []string{"plan-1:awaiting_approval:bursar"}) {
		t.Errorf("action.updated = %v, want only the request", got)
	}
	if got := r.approvals.Pending(); !reflect.DeepEqual(got, []string{"plan-1"}) {
		t.Fatalf("pending after a decision the arbiter could not apply = %v, want plan-1 still asked", got)
	}
	r.mu.Lock()
	r.refuse = nil
	r.mu.Unlock()
	r.clock.Add(time.Second) // a new click, not a replay of the first
	r.click("U0APPROVER", ActionApprove, "plan-1")
	want := []string{"plan-1:awaiting_approval:bursar", "plan-1:approved:U0APPROVER"}
	if got := statuses(r.updates()); !reflect.DeepEqual(got, want) {
		t.Errorf("action.updated after trying again = %v, want %v", got, want)
	}
	if len(r.approvals.Pending()) != 0 {
		t.Errorf("still pending after the decision was applied: %v", r.approvals.Pending())
	}
}

// TestClickAfterTheDeadlineIsATimeout: an Approve clicked after the request's deadline, before
// the sweep came by, does not approve: the request is rejected as timed out and the approver is
// told (found by the soak, whose sweep runs on the wall clock beside a fast market).
func TestClickAfterTheDeadlineIsATimeout(t *testing.T) {
	r := newRig(t)
	ask(t, r, "plan-1", "U0APPROVER")
	r.clock.Add(31 * time.Minute)
	if code := r.click("U0APPROVER", ActionApprove, "plan-1"); code != http.StatusOK {
		t.Fatalf("click: HTTP %d", code)
	}
	if got := r.decided(); len(got) != 1 || got[0].Status != events.ActionRejected || got[0].Actor != "timeout" {
		t.Errorf("decisions = %+v, want one rejection by timeout", got)
	}
	want := []string{"plan-1:awaiting_approval:bursar", "plan-1:rejected:timeout"}
	if got := statuses(r.updates()); !reflect.DeepEqual(got, want) {
		t.Errorf("action.updated = %v, want %v", got, want)
	}
	told := false
	for _, m := range r.slack.Messages() {
		told = told || m.Method == "chat.postEphemeral" && m.User == "U0APPROVER" && strings.Contains(m.Text, "timed out")
	}
	if !told {
		t.Errorf("the approver was not told the request had timed out (%d messages)", len(r.slack.Messages()))
	}
	if len(r.approvals.Pending()) != 0 {
		t.Errorf("still pending: %v", r.approvals.Pending())
	}
}
