package slack

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// slowAsk asks for plan id while Slack answers the post late: the Ask's deadline passes first.
func slowAsk(t *testing.T, r *rig, id string) {
	t.Helper()
	r.slack.SlowNext(500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.approvals.Ask(ctx, Request{Plan: plan(id), Approvers: []string{"U0APPROVER"}, Timeout: 30 * time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Ask before a slow Slack answered: err = %v, want the deadline", err)
	}
	if got := r.approvals.Pending(); !reflect.DeepEqual(got, []string{id}) {
		t.Errorf("pending = %v while its post is on its way, want [%s]", got, id)
	}
}

// TestSlowPostIsNotPostedAgain: the ask loop retries an Ask whose post Slack took but answered
// after the deadline; the retry waits for that post's answer instead of posting the question a
// second time, and gets where the message is.
func TestSlowPostIsNotPostedAgain(t *testing.T) {
	r := newRig(t)
	slowAsk(t, r, "p")
	at, err := r.approvals.Ask(context.Background(), Request{Plan: plan("p"), Approvers: []string{"U0APPROVER"}, Timeout: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	msgs := r.slack.Messages()
	if len(msgs) != 1 || msgs[0].Method != "chat.postMessage" {
		t.Fatalf("slack got %d messages, want the one question", len(msgs))
	}
	if at.TS != msgs[0].TS || at.Channel != channel {
		t.Errorf("Ask says the question is at %+v, want %s/%s", at, channel, msgs[0].TS)
	}
	if got := statuses(r.updates()); !reflect.DeepEqual(got, []string{"p:awaiting_approval:bursar"}) {
		t.Errorf("updates = %v", got)
	}
}

// TestClickOnASlowPostDecides: the approver clicks a question whose post Slack has not answered
// yet; the click decides (the message is there: it was clicked), and the outcome is shown on
// that message.
func TestClickOnASlowPostDecides(t *testing.T) {
	r := newRig(t)
	slowAsk(t, r, "p")
	r.clock.Add(time.Minute)
	if code := r.click("U0APPROVER", ActionReject, "p"); code != 200 {
		t.Fatalf("click: HTTP %d", code)
	}
	if d := r.decided(); len(d) != 1 || d[0].Status != events.ActionRejected || d[0].Actor != "U0APPROVER" {
		t.Fatalf("decisions = %+v, want one rejection by U0APPROVER", d)
	}
	msgs := r.slack.WaitFor(t, 2)
	if m := msgs[1]; m.Method != "chat.update" || m.TS != msgs[0].TS || !strings.Contains(texts(t, m), "*Rejected* by <@U0APPROVER>") {
		t.Errorf("the question was not updated with the outcome: %+v", m)
	}
	if len(r.approvals.Pending()) != 0 {
		t.Errorf("pending = %v after the decision", r.approvals.Pending())
	}
}

// TestTimeoutBeforeASlowPostAnsweredIsShown: a request that times out while its post is on its
// way is rejected, and the outcome is shown once Slack says where the message is.
func TestTimeoutBeforeASlowPostAnsweredIsShown(t *testing.T) {
	r := newRig(t)
	slowAsk(t, r, "p")
	r.clock.Add(31 * time.Minute)
	r.approvals.Sweep(context.Background())
	if d := r.decided(); len(d) != 1 || d[0].Actor != "timeout" {
		t.Fatalf("decisions = %+v, want a timeout", d)
	}
	msgs := r.slack.WaitFor(t, 2)
	if m := msgs[1]; m.Method != "chat.update" || m.TS != msgs[0].TS || !strings.Contains(texts(t, m), "*Rejected*") {
		t.Errorf("the question was not updated with the timeout: %+v", m)
	}
}
