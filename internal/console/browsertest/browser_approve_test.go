package browsertest_test

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/console/browsertest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// TestBrowserApprove approves a held plan on the approvals page of a console wired to the
// arbiter system as `arbiter run` wires it: a reader sees no button and a forged POST changes
// nothing; the approver's click makes the arbiter apply the plan's actions, each reaching the
// sim actuator once, records it as a Slack click would, and the Slack message asking about it
// shows it decided. Approving again is refused and applies nothing more.
func TestBrowserApprove(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and a browser; skipped with -short")
	}
	t.Parallel()
	a := startArbiter(t)
	s := serveConsole(t, a.sys.Approvals(), a.sys.Budgets.Policies)
	plan, held, question := a.hold(t)

	t.Run("a reader sees no button", func(t *testing.T) {
		anon := browsertest.NewTab(t)
		anon.Open(s.URL + "/approvals")
		if !anon.Has(sel("hold-"+plan)) || anon.Has(sel("approve-"+plan)) || anon.Has(sel("reject-"+plan)) {
			t.Errorf("without a login: hold shown %v, approve button %v (want the hold and no button)",
				anon.Has(sel("hold-"+plan)), anon.Has(sel("approve-"+plan)))
		}
		tab := browsertest.NewTab(t)
		s.login(t, tab, s.token(t, reader), "/approvals")
		if tab.Has(sel("approve-"+plan)) || tab.Has(sel("reject-"+plan)) {
			t.Errorf("%s, not an approver, is offered the buttons", reader)
		}
		tab.Screenshot("approvals-reader")
	})

	tab := browsertest.NewTab(t)
	s.login(t, tab, s.token(t, approver), "/approvals")
	if got := tab.Text(sel("identity")); got != approver {
		t.Fatalf("logged in as %q, want %s", got, approver)
	}
	t.Run("a forged POST is refused", func(t *testing.T) {
		before := a.trail(t, held)
		// The approver's own session without the page's CSRF token: what a script that got onto
		// the page could send.
		status := tab.Eval(`fetch("/approvals/` + plan + `/approve", {method: "POST", credentials: "same-origin"}).then(r => r.status)`)
		if status != float64(http.StatusForbidden) {
			t.Errorf("POST without a CSRF token: %v, want 403", status)
		}
		// Another site's form posting to the console: the browser sends no session cookie
		// (SameSite=Strict) and the Origin is not the console's.
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><form data-test="forged" method="post" action="%s/approvals/%s/approve"><input name="csrf" value="guess"></form>`, s.URL, plan)
		}))
		defer evil.Close()
		tab.Open(evil.URL)
		tab.Submit(sel("forged"), nil)
		a.step(t)
		if open := a.sys.Approvals().Open(); len(open) != 1 || open[0].Plan != plan {
			t.Errorf("after forged POSTs the pending holds are %+v, want %s alone", open, plan)
		}
		if got := a.trail(t, held); !slices.Equal(got, before) {
			t.Errorf("forged POSTs changed the audit trail from %q to %q", before, got)
		}
		if n := a.sim.scaled(); len(n) != 0 {
			t.Fatalf("a forged POST reached the actuator: %v", n)
		}
	})

	tab.Open(s.URL + "/approvals")
	checkPreview(t, tab, a, plan)
	tab.Screenshot("approvals-pending")
	tab.Follow("approve-" + plan)
	if got := tab.Text(sel("decision-done")); !strings.Contains(got, "approved") || !strings.Contains(got, plan) {
		t.Errorf("after Approve the page says %q", got)
	}
	if tab.Has(sel("approve-" + plan)) {
		t.Error("the decided plan still offers Approve")
	}
	tab.Screenshot("approvals-decided")

	// The arbiter applies what was approved in its next round (Step carries each action to its
	// end), each action once, and the rounds after it apply nothing again.
	a.step(t)
	if got := a.sim.scaled(); len(got) == 0 {
		t.Fatalf("the round after the approval applied nothing (want %v)", held)
	}
	for range 3 {
		a.step(t)
	}
	checkAppliedOnce(t, a, held)
	if got, want := a.trail(t, held), []string{string(events.ActionAwaitingApproval), string(events.ActionApproved) + " by " + approver,
		string(events.ActionApplied)}; len(got) != len(want) || !strings.HasPrefix(got[0], want[0]+" by ") || got[1] != want[1] ||
		!strings.HasPrefix(got[2], want[2]+" by ") {
		t.Errorf("audit trail %q, want awaiting_approval, approved by %s, applied", got, approver)
	}
	checkShown(t, a.slack, question, "Approved", "via console")

	// Deciding again, through the API with the session's CSRF token, is refused and applies
	// nothing twice.
	status := tab.Eval(`fetch("/api/v1/holds/` + plan + `/approve", {method: "POST", credentials: "same-origin",
		headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(r => r.status)`)
	if status != float64(http.StatusConflict) {
		t.Errorf("approving again: HTTP %v, want 409", status)
	}
	a.step(t)
	checkAppliedOnce(t, a, held)
}

// TestBrowserDecidedInSlack rejects a hold with a click in Slack while the approvals page shows
// it: the page, reloaded, no longer offers it, Approve from the page loaded before is refused
// with the reason, and the arbiter applies nothing.
func TestBrowserDecidedInSlack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and a browser; skipped with -short")
	}
	t.Parallel()
	a := startArbiter(t)
	s := serveConsole(t, a.sys.Approvals(), a.sys.Budgets.Policies)
	plan, held, question := a.hold(t)

	stale := browsertest.NewTab(t)
	s.login(t, stale, s.token(t, approver), "/approvals")
	if !stale.Has(sel("approve-" + plan)) {
		t.Fatal("the approver is not offered Approve on the pending hold")
	}
	if code := a.click(t, approver, slack.ActionReject, plan); code != http.StatusOK {
		t.Fatalf("the Slack click: HTTP %d", code)
	}
	checkShown(t, a.slack, question, "Rejected")

	fresh := browsertest.NewTab(t)
	s.login(t, fresh, s.token(t, approver), "/approvals")
	if fresh.Has(sel("hold-" + plan)) {
		t.Error("the hold rejected in Slack is still pending on the console")
	}
	stale.Follow("approve-" + plan)
	if !stale.Has(sel("decision-error")) || !strings.Contains(stale.Text(sel("decision-error")), "no approval is pending") {
		t.Errorf("Approve after Slack's Reject: the page does not say it is no longer pending")
	}
	stale.Screenshot("approvals-decided-in-slack")
	for range 3 {
		a.step(t)
	}
	if n := a.sim.scaled(); len(n) != 0 {
		t.Errorf("the rejected plan reached the actuator: %v", n)
	}
	if got := a.trail(t, held); slices.Contains(got, string(events.ActionApproved)+" by "+approver) ||
		!slices.Contains(got, string(events.ActionRejected)+" by "+approver) {
		t.Errorf("audit trail %q, want Slack's rejection and no approval", got)
	}
}

// checkPreview checks that the approvals page shows the hold's cost preview as the arbiter
// holds it: the plan's $/h before and after.
func checkPreview(t *testing.T, tab *browsertest.Tab, a *rig, plan string) {
	t.Helper()
	open := a.sys.Approvals().Open()
	if len(open) != 1 || open[0].Plan != plan || !(open[0].After > open[0].Before) {
		t.Fatalf("the arbiter holds %+v, want %s adding cost", open, plan)
	}
	want := fmt.Sprintf("%v → %v", open[0].Before, open[0].After)
	if row := tab.Text(sel("hold-" + plan)); !strings.Contains(row, want) {
		t.Errorf("the hold's row reads %q, want its cost preview %q", row, want)
	}
}

// checkAppliedOnce checks that each held action reached the actuator exactly once, and nothing
// else did.
func checkAppliedOnce(t *testing.T, a *rig, held []string) {
	t.Helper()
	got := a.sim.scaled()
	for _, id := range held {
		if got[id] != 1 {
			t.Errorf("approved action %s reached the actuator %d times, want once (all: %v)", id, got[id], got)
		}
	}
	if ids := slices.Sorted(maps.Keys(got)); len(ids) != len(held) {
		t.Errorf("the actuator was asked to apply %v, want only the approved %v", ids, held)
	}
}

// checkShown checks that the last version of Slack's question shows it decided (words: Approved,
// Rejected, and how) and offers no buttons any more.
func checkShown(t *testing.T, fake *slacktest.Server, question slacktest.Message, words ...string) {
	t.Helper()
	var last slacktest.Message
	for _, m := range fake.Messages() {
		if m.Method == "chat.update" && m.TS == question.TS {
			last = m
		}
	}
	texts, err := slacktest.Texts(last.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts, "\n")
	for _, w := range words {
		if !strings.Contains(all, w) {
			t.Errorf("Slack's question does not say %q: %s\n%s", w, cmp.Or(last.Method, "(never updated)"), all)
		}
	}
	if strings.Contains(string(last.Blocks), slack.ActionApprove) {
		t.Errorf("Slack's question still offers its buttons: %s", last.Blocks)
	}
}

// updates reads the action.updated events on the bus, in order: the audit trail decisions
// leave, the same whether they came from Slack or the console.
func (a *rig) updates(t *testing.T) []*events.ActionUpdated {
	t.Helper()
	ctx := t.Context()
	st, err := a.env.JS.Stream(ctx, bus.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*events.ActionUpdated
	if info.State.Msgs == 0 {
		return out
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.action.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for range info.State.Msgs {
		m, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			break // fewer action events than messages in the stream
		}
		e, err := events.Decode(m.Data())
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := e.(*events.ActionUpdated); ok {
			out = append(out, u)
		}
	}
	return out
}

// trail is the audit trail of the given actions: each status with who set it, once per status
// and actor, in the order first seen.
func (a *rig) trail(t *testing.T, actions []string) []string {
	t.Helper()
	var out []string
	for _, u := range a.updates(t) {
		if s := string(u.Status) + " by " + u.Actor; slices.Contains(actions, u.ActionID) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// awaiting are the ids of the actions awaiting approval, as the bus says; the rig holds one plan.
func (a *rig) awaiting(t *testing.T) []string {
	t.Helper()
	var ids []string
	for _, u := range a.updates(t) {
		if u.Status == events.ActionAwaitingApproval && !slices.Contains(ids, u.ActionID) {
			ids = append(ids, u.ActionID)
		}
	}
	return ids
}
