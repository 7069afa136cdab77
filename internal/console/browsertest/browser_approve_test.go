package browsertest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	slackgo "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/console"
	"github.com/bursar-dev/bursar/internal/console/browsertest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// slackHolds is the console's Approvals over slack.Approvals, as the arbiter wires them: the
// holds Slack is asking about, decided under a click's rules.
type slackHolds struct{ a *slack.Approvals }

func (h slackHolds) Open() []console.Hold {
	var out []console.Hold
	for _, o := range h.a.Open() {
		out = append(out, console.Hold{Plan: o.Plan, Workload: o.Workload, Approvers: o.Approvers, Deadline: o.Deadline,
			Before: o.USDPerHourWas, After: o.USDPerHourNow, Reasons: o.Reasons})
	}
	return out
}

func (h slackHolds) Decide(ctx context.Context, plan string, approve bool, who string) error {
	err := h.a.DecideAs(ctx, plan, approve, who)
	switch {
	case errors.Is(err, slack.ErrNotApprover):
		return fmt.Errorf("%w: %w", console.ErrNotApprover, err)
	case errors.Is(err, slack.ErrNoPending), errors.Is(err, slack.ErrTimedOut):
		return fmt.Errorf("%w: %w", console.ErrNotPending, err)
	}
	return err
}

// holds are approval requests asked in Slack, with what their decisions did: the sim fleet an
// approved plan scales (as the arbiter applies an approved plan), the fake Slack showing the
// questions, and the bus their audit trail goes to.
type holds struct {
	approvals *slack.Approvals
	slack     *slacktest.Server
	fleet     *sim.Fleet
	bus       *bustest.Env

	mu        sync.Mutex
	decisions []slack.Decision
}

const (
	approver = "U0APPROVER"
	reader   = "U0READER"
)

func newHolds(t *testing.T, s *site) *holds {
	t.Helper()
	fake := slacktest.New(t, "xoxb-browser-test")
	env := bustest.Start(t)
	h := &holds{slack: fake, fleet: sim.New(s.History.Fleet, time.Now), bus: env}
	h.approvals = slack.NewApprovals(slackgo.New(fake.Token, slackgo.OptionAPIURL(fake.URL)), "C0APPROVALS",
		bus.NewPublisher(env.JS), time.Now, slog.New(slog.DiscardHandler))
	h.approvals.OnDecision = h.apply
	return h
}

// ask asks Slack to approve plan id, which launches one more chat replica on demand, as the
// arbiter does when a budget's approval threshold holds a plan; it returns the question's message.
func (h *holds) ask(t *testing.T, id string) (events.PlanDecided, slacktest.Message) {
	t.Helper()
	plan := events.PlanDecided{PlanID: id, Workload: "chat", USDPerHourWas: 1.2, USDPerHourNow: 1.726,
		NeedsApproval: true, Actions: []events.PlanAction{{ID: id + "-a1", Kind: "launch", Location: "aws-usw2b",
			Offer: "aws-usw2b/us-west-2/g4dn.xlarge/on_demand", Market: events.OnDemand, Replicas: 1, Delta: 1, Reason: "demand", NeedsApproval: true}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := len(h.slack.Messages())
	if _, err := h.approvals.Ask(ctx, slack.Request{Plan: plan, Reasons: []string{"demand"}, Policies: []string{"demo-monthly"},
		Approvers: []string{approver}, Timeout: time.Hour}); err != nil {
		t.Fatal(err)
	}
	return plan, h.slack.WaitFor(t, n+1)[n]
}

// click is a click on a Slack message's button, as Slack's interaction endpoint hands it to the
// approvals once its signature checked.
func (h *holds) click(t *testing.T, m slacktest.Message, user, button, plan string) error {
	t.Helper()
	cb := slackgo.InteractionCallback{Type: slackgo.InteractionTypeBlockActions, User: slackgo.User{ID: user},
		Channel:        slackgo.Channel{GroupConversation: slackgo.GroupConversation{Conversation: slackgo.Conversation{ID: m.Channel}}},
		Container:      slackgo.Container{ChannelID: m.Channel, MessageTs: m.TS},
		ActionCallback: slackgo.ActionCallbacks{BlockActions: []*slackgo.BlockAction{{ActionID: button, Value: plan}}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return h.approvals.Handle(ctx, cb)
}

// apply is OnDecision: an approved plan's actions scale the sim fleet, as the arbiter's
// budgets apply an approved hold through the actuator.
func (h *holds) apply(ctx context.Context, d slack.Decision) error {
	h.mu.Lock()
	h.decisions = append(h.decisions, d)
	h.mu.Unlock()
	if d.Status != events.ActionApproved {
		return nil
	}
	for _, a := range d.Plan.Actions {
		err := h.fleet.Scale(ctx, actuate.Target{ActionID: a.ID, Group: actuate.Group{Workload: d.Plan.Workload, Location: a.Location,
			Market: a.Market}, Offer: a.Offer, Replicas: a.Replicas, Kind: a.Kind, Reason: a.Reason})
		if err != nil {
			return err
		}
	}
	return nil
}

// audit reads the action.updated events published for plan's actions, in order: the audit
// trail a decision leaves, the same whether it came from Slack or the console.
func (h *holds) audit(t *testing.T, plan string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := h.bus.JS.Stream(ctx, bus.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if info.State.Msgs == 0 {
		return out
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.action.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for range info.State.Msgs {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			break // fewer action events than messages in the stream
		}
		e, err := events.Decode(m.Data())
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := e.(*events.ActionUpdated); ok && u.PlanID == plan {
			out = append(out, string(u.Status)+" by "+u.Actor)
		}
	}
	return out
}

// decided are the decisions applied for plan, in order.
func (h *holds) decided(plan string) []slack.Decision {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []slack.Decision
	for _, d := range h.decisions {
		if d.Plan.PlanID == plan {
			out = append(out, d)
		}
	}
	return out
}

// TestBrowserApprove approves a held plan on the approvals page: a reader sees no button and a
// forged POST changes nothing; the approver's click applies the plan once (the sim fleet scales
// once), records it as a Slack click would, and the Slack message asking about it shows it
// decided.
func TestBrowserApprove(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and a browser; skipped with -short")
	}
	t.Parallel()
	var appr slackHolds
	s := startConsole(t, &appr)
	h := newHolds(t, s)
	appr.a = h.approvals
	held, question := h.ask(t, "plan-browser-approve")
	plan := held.PlanID

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
		if d, a := h.decided(plan), h.audit(t, plan); len(d) != 0 || len(a) != 1 || len(h.fleet.Calls()) != 0 {
			t.Fatalf("a forged POST changed something: decisions %v, audit %q, fleet %v", d, a, h.fleet.Calls())
		}
	})

	tab.Open(s.URL + "/approvals")
	tab.Screenshot("approvals-pending")
	tab.Follow("approve-" + plan)
	if got := tab.Text(sel("decision-done")); !strings.Contains(got, "approved") || !strings.Contains(got, plan) {
		t.Errorf("after Approve the page says %q", got)
	}
	tab.Screenshot("approvals-decided")
	if d := h.decided(plan); len(d) != 1 || d[0].Status != events.ActionApproved || d[0].Actor != approver {
		t.Fatalf("decisions %+v, want one approval by %s", d, approver)
	}
	if calls := h.fleet.Calls(); len(calls) != 1 || calls[0].ActionID != held.Actions[0].ID {
		t.Fatalf("the sim fleet was scaled %d times (%v), want once, for the plan's action", len(calls), calls)
	}
	if got, want := h.audit(t, plan), []string{"awaiting_approval by bursar", "approved by " + approver}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("audit trail %q, want %q", got, want)
	}
	checkShown(t, h.slack, question, "Approved")
	if tab.Has(sel("approve-" + plan)) {
		t.Error("the decided plan still offers Approve")
	}

	// Deciding again, through the API, is refused and applies nothing twice.
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/holds/"+plan+"/approve", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token(t, approver))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || len(h.decided(plan)) != 1 || len(h.fleet.Calls()) != 1 {
		t.Errorf("approving again: %s, %d decisions, %d scalings; want 409 and one each", resp.Status, len(h.decided(plan)), len(h.fleet.Calls()))
	}
}

// TestBrowserDecidedInSlack rejects a hold in Slack while the approvals page shows it: the page,
// reloaded, no longer offers it, and Approve from the page loaded before is refused with the
// reason and changes nothing.
func TestBrowserDecidedInSlack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and a browser; skipped with -short")
	}
	t.Parallel()
	var appr slackHolds
	s := startConsole(t, &appr)
	h := newHolds(t, s)
	appr.a = h.approvals
	held, question := h.ask(t, "plan-browser-slack")
	plan := held.PlanID

	stale := browsertest.NewTab(t)
	s.login(t, stale, s.token(t, approver), "/approvals")
	if !stale.Has(sel("approve-" + plan)) {
		t.Fatal("the approver is not offered Approve on the pending hold")
	}
	if err := h.click(t, question, approver, slack.ActionReject, plan); err != nil {
		t.Fatalf("the Slack click: %v", err)
	}
	checkShown(t, h.slack, question, "Rejected")

	fresh := browsertest.NewTab(t)
	s.login(t, fresh, s.token(t, approver), "/approvals")
	if fresh.Has(sel("hold-" + plan)) {
		t.Error("the hold rejected in Slack is still pending on the console")
	}
	stale.Follow("approve-" + plan)
	if !stale.Has(sel("decision-error")) || !strings.Contains(stale.Text(sel("decision-error")), "not pending") {
		t.Errorf("Approve after Slack's Reject: the page does not say it is no longer pending")
	}
	stale.Screenshot("approvals-decided-in-slack")
	if d := h.decided(plan); len(d) != 1 || d[0].Status != events.ActionRejected {
		t.Errorf("decisions %+v, want only Slack's rejection", d)
	}
	if len(h.fleet.Calls()) != 0 {
		t.Errorf("the rejected plan scaled the fleet: %v", h.fleet.Calls())
	}
}

// checkShown checks that the last version of Slack's question shows it decided (word: Approved,
// Rejected) and offers no buttons any more.
func checkShown(t *testing.T, fake *slacktest.Server, question slacktest.Message, word string) {
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
	if all := strings.Join(texts, "\n"); !strings.Contains(all, word) || strings.Contains(string(last.Blocks), slack.ActionApprove) {
		t.Errorf("Slack's question does not show it %s: %s\n%s", strings.ToLower(word), last.Method, all)
	}
}
