package slack

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// askAfter asks, after restores were applied, whether to keep them: its actions are go-backs.
func askAfter(t *testing.T, r *rig, id string) {
	t.Helper()
	p := plan(id)
	p.USDPerHourWas, p.USDPerHourNow = 2, 5
	p.Actions = []events.PlanAction{
		{ID: id + "-r", Kind: "launch", Location: "a", Offer: "a/od", Market: events.OnDemand, Replicas: 3, Delta: 1, Reason: "fallback"},
		{ID: id + "-a1", Kind: "drain", Location: "a", Offer: "a/od", Market: events.OnDemand, Replicas: 2, Delta: -1,
			Reason: "go_back", NeedsApproval: true}}
	req := Request{Plan: p, Reasons: []string{`budget "svc": restoring lost capacity added 3.00 USD/h, applied at once`},
		Policies: []string{"svc"}, Approvers: []string{"U0APPROVER"}, Timeout: 30 * time.Minute, Restored: true}
	if _, err := r.approvals.Ask(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// TestAfterARestoreTheButtonsAreKeepAndGoBack: a question asked after a restore shows what it
// added per hour with Keep and Go back; Go back approves the go-backs it asks about, Keep rejects
// them, no answer keeps the restore; Approve and Reject are not its buttons. Each step is audited
// on the go-backs as any approval's is.
func TestAfterARestoreTheButtonsAreKeepAndGoBack(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	askAfter(t, r, "back")
	msgs := r.slack.WaitFor(t, 1)
	if got, want := buttons(t, msgs[0]), []string{"bursar_keep=back", "bursar_go_back=back"}; !reflect.DeepEqual(got, want) {
		t.Errorf("buttons = %v, want %v", got, want)
	}
	for _, want := range []string{"Restored at once: llm", "Restoring added per hour", "2.00 → 5.00 USD (+3.00)", "(then kept)", "fallback"} {
		if !strings.Contains(texts(t, msgs[0]), want) {
			t.Errorf("the message lacks %q:\n%s", want, msgs[0].Blocks)
		}
	}
	if code := r.click("U0APPROVER", ActionApprove, "back"); code != http.StatusOK || len(r.approvals.Pending()) != 1 {
		t.Fatalf("Approve on a message after a restore: HTTP %d, pending %v; want it ignored", code, r.approvals.Pending())
	}
	r.click("U0APPROVER", ActionGoBack, "back")
	askAfter(t, r, "keep")
	r.click("U0APPROVER", ActionKeep, "keep")
	askAfter(t, r, "quiet")
	r.clock.Add(30 * time.Minute)
	r.approvals.Sweep(ctx)

	if got := r.approvals.Pending(); len(got) != 0 {
		t.Fatalf("pending = %v, want every question decided", got)
	}
	var outcomes []string
	for _, m := range r.slack.Messages() {
		if m.Method == "chat.update" {
			outcomes = append(outcomes, m.Text)
		}
	}
	want := []string{"Restore for llm gone back on by U0APPROVER", "Restore for llm kept by U0APPROVER", "Restore for llm kept by timeout"}
	if !reflect.DeepEqual(outcomes, want) {
		t.Errorf("updates %q, want %q", outcomes, want)
	}
	if last := r.slack.Messages()[len(r.slack.Messages())-1]; !strings.Contains(texts(t, last), "*Kept*: no answer within 30m0s") {
		t.Errorf("timed-out message = %s", last.Blocks)
	}
	wantSteps := []string{"back:awaiting_approval:bursar", "back:approved:U0APPROVER", "keep:awaiting_approval:bursar",
		"keep:rejected:U0APPROVER", "quiet:awaiting_approval:bursar", "quiet:rejected:timeout"}
	if got := statuses(r.updates()); !reflect.DeepEqual(got, wantSteps) {
		t.Errorf("action.updated = %v\nwant %v", got, wantSteps)
	}
}
