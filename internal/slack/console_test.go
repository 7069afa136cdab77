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

// TestConsoleApprovesAsAClickDoes: an approval from the console is applied once, published with
// who and where, and shown on the Slack message; a later click finds it decided.
func TestConsoleApprovesAsAClickDoes(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	ask(t, r, "plan-1", "U0APPROVER")
	posted := r.slack.WaitFor(t, 1)[0]
	r.clock.Add(3 * time.Minute)

	if err := r.approvals.DecideAs(ctx, "plan-1", true, "U0APPROVER"); err != nil {
		t.Fatalf("DecideAs: %v", err)
	}
	if d := r.decided(); len(d) != 1 || d[0].Status != events.ActionApproved || d[0].Actor != "U0APPROVER" ||
		d[0].Detail != viaConsole || !d[0].At.Equal(start.Add(3*time.Minute)) {
		t.Errorf("decisions = %+v", d)
	}
	msgs := r.slack.WaitFor(t, 2)
	if m := msgs[1]; m.Method != "chat.update" || m.TS != posted.TS || len(buttons(t, m)) != 0 ||
		!strings.Contains(texts(t, m), "*Approved* by <@U0APPROVER>") || !strings.Contains(texts(t, m), viaConsole) {
		t.Errorf("slack message not updated to decided: %+v\n%s", m, texts(t, m))
	}
	us := r.updates()
	if got, want := statuses(us), []string{"plan-1:awaiting_approval:bursar", "plan-1:approved:U0APPROVER"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("action.updated = %v, want %v", got, want)
	}
	if us[1].Detail != viaConsole {
		t.Errorf("audit detail = %q, want %q", us[1].Detail, viaConsole)
	}

	// The click that comes after finds it decided: told so, nothing applied again.
	r.click("U0APPROVER", ActionReject, "plan-1")
	msgs = r.slack.WaitFor(t, 3)
	if m := msgs[2]; m.Method != "chat.postEphemeral" || !strings.Contains(m.Text, "no longer pending") {
		t.Errorf("late click: %+v", m)
	}
	if n := len(r.decided()); n != 1 {
		t.Errorf("%d decisions, want 1", n)
	}
	if len(r.approvals.Open()) != 0 {
		t.Errorf("open after the decision: %+v", r.approvals.Open())
	}
}

func TestClickFirstThenConsoleFindsItDecided(t *testing.T) {
	r := newRig(t)
	ask(t, r, "plan-1", "U0APPROVER")
	r.click("U0APPROVER", ActionReject, "plan-1")
	err := r.approvals.DecideAs(context.Background(), "plan-1", true, "U0APPROVER")
	if !errors.Is(err, ErrNoPending) {
		t.Fatalf("DecideAs after a click = %v, want ErrNoPending", err)
	}
	if d := r.decided(); len(d) != 1 || d[0].Status != events.ActionRejected || d[0].Detail != "" {
		t.Errorf("decisions = %+v, want the click's rejection only", d)
	}
}

func TestConsoleEmailIsResolved(t *testing.T) {
	r := newRig(t)
	r.slack.SetUser("ana@example.com", "U0APPROVER")
	r.slack.SetUser("gus@example.com", "U0GROUPIE")
	r.slack.SetGroup("S0FINOPS", "U0GROUPIE")
	ask(t, r, "plan-1", "U0APPROVER")
	ask(t, r, "plan-2", "S0FINOPS")
	ctx := context.Background()
	if err := r.approvals.DecideAs(ctx, "plan-1", true, "ana@example.com"); err != nil {
		t.Fatalf("listed user by e-mail: %v", err)
	}
	if err := r.approvals.DecideAs(ctx, "plan-2", false, " gus@example.com "); err != nil {
		t.Fatalf("group member by e-mail: %v", err)
	}
	var got []string
	for _, d := range r.decided() {
		got = append(got, d.Plan.PlanID+":"+string(d.Status)+":"+d.Actor)
	}
	if want := []string{"plan-1:approved:U0APPROVER", "plan-2:rejected:U0GROUPIE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("decisions = %v, want %v (actors recorded as Slack user ids)", got, want)
	}
}

// TestConsoleRefusalsChangeNothing: an answer the rules refuse leaves the request pending, its
// message as it was, nothing applied and nothing published, and says why.
func TestConsoleRefusalsChangeNothing(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(r *rig)
		who     string
		plan    string
		wantErr error
		wantMsg string
	}{
		{name: "not an approver", who: "U0RANDOM", plan: "plan-1", wantErr: ErrNotApprover, wantMsg: "U0RANDOM"},
		{name: "nobody", who: "  ", plan: "plan-1", wantErr: ErrNotApprover, wantMsg: "no identity"},
		{name: "unknown e-mail", who: "eve@example.com", plan: "plan-1", wantErr: ErrNotApprover,
			wantMsg: "no slack user has the e-mail eve@example.com"},
		{name: "e-mail of a user not listed", who: "rob@example.com", plan: "plan-1", wantErr: ErrNotApprover,
			setup: func(r *rig) { r.slack.SetUser("rob@example.com", "U0RANDOM") }, wantMsg: "U0RANDOM"},
		{name: "lookup fails", who: "ana@example.com", plan: "plan-1", wantMsg: "try again",
			setup: func(r *rig) {
				r.slack.SetUser("ana@example.com", "U0APPROVER")
				r.slack.FailNext("users.lookupByEmail", "internal_error")
			}},
		{name: "unknown plan", who: "U0APPROVER", plan: "plan-9", wantErr: ErrNoPending, wantMsg: "plan-9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ask(t, r, "plan-1", "U0APPROVER")
			if tt.setup != nil {
				tt.setup(r)
			}
			err := r.approvals.DecideAs(context.Background(), tt.plan, true, tt.who)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want one saying %q", err, tt.wantMsg)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && (errors.Is(err, ErrNotApprover) || errors.Is(err, ErrNoPending)) {
				t.Errorf("a failed lookup reads as a refusal: %v", err)
			}
			if got := r.approvals.Pending(); !reflect.DeepEqual(got, []string{"plan-1"}) {
				t.Errorf("pending = %v", got)
			}
			if len(r.decided()) != 0 || len(r.updates()) != 1 || len(r.slack.Messages()) != 1 {
				t.Errorf("a refused answer changed something: decisions %v, %d updates, %d slack messages",
					r.decided(), len(r.updates()), len(r.slack.Messages()))
			}
		})
	}
}

func TestConsoleAfterTheDeadlineFindsItTimedOut(t *testing.T) {
	r := newRig(t)
	ask(t, r, "plan-1", "U0APPROVER")
	r.clock.Add(30 * time.Minute) // the sweep has not come by
	if o := r.approvals.Open(); len(o) != 0 {
		t.Errorf("open past its deadline: %+v", o)
	}
	err := r.approvals.DecideAs(context.Background(), "plan-1", true, "U0APPROVER")
	if !errors.Is(err, ErrTimedOut) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want ErrTimedOut", err)
	}
	if d := r.decided(); len(d) != 1 || d[0].Status != events.ActionRejected || d[0].Actor != "timeout" {
		t.Errorf("decisions = %+v, want the timeout's rejection", d)
	}
	if len(r.approvals.Pending()) != 0 {
		t.Errorf("still pending: %v", r.approvals.Pending())
	}
}

func TestOpenListsPendingRequests(t *testing.T) {
	r := newRig(t)
	ask(t, r, "plan-b", "U0APPROVER", "S0FINOPS")
	r.clock.Add(time.Minute)
	ask(t, r, "plan-a", "U0APPROVER")
	got := r.approvals.Open()
	if len(got) != 2 || got[0].Plan != "plan-b" || got[1].Plan != "plan-a" {
		t.Fatalf("open = %+v, want plan-b (sooner deadline) then plan-a", got)
	}
	want := Open{Plan: "plan-b", Workload: "llm", Approvers: []string{"U0APPROVER", "S0FINOPS"},
		Policies: []string{"llm-daily"}, Reasons: []string{`budget "llm-daily": cutting llm below its minimum needs an approval`},
		Deadline: start.Add(30 * time.Minute), USDPerHourWas: 94.2, USDPerHourNow: 60}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("open[0] = %+v\nwant %+v", got[0], want)
	}
	got[0].Approvers[0] = "changed"
	if r.approvals.Open()[0].Approvers[0] != "U0APPROVER" {
		t.Error("Open hands out the request's own slices")
	}
}

// TestConsoleEmailWithoutSlack: approvals running without a Slack (a stand-in that cannot look
// users up) refuse an e-mail and say to give the user id, which still works.
func TestConsoleEmailWithoutSlack(t *testing.T) {
	r := newRig(t)
	offline := struct{ chatAPI }{r.approvals.api} // the chat calls only: no users.lookupByEmail
	r.approvals.api = offline
	ask(t, r, "plan-1", "U0APPROVER")
	err := r.approvals.DecideAs(context.Background(), "plan-1", true, "ana@example.com")
	if !errors.Is(err, ErrNotApprover) || !strings.Contains(err.Error(), "Slack user id") {
		t.Fatalf("err = %v, want a refusal saying to give the Slack user id", err)
	}
	if err := r.approvals.DecideAs(context.Background(), "plan-1", true, "U0APPROVER"); err != nil {
		t.Fatalf("by user id: %v", err)
	}
}
