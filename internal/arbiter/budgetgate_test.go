package arbiter_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

const (
	slackToken  = "xoxb-test-token"
	slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	approver    = "U0APPROVER"
)

// svcPolicy asks for approval of any action adding over 1 USD/h to svc, and alerts once svc has
// spent 20 USD in a day.
const svcPolicy = `name: svc-day
scope: workload=svc
period: day
limit: 100
currency: USD
thresholds:
  - {at: 20}
approve_over: 1/h
approvers: [U0APPROVER]
approval_timeout: 10m
`

// budgetRig is the arbiter with budgets and Slack approvals: real JetStream, the sim actuator,
// a fake Slack and the signed interactions endpoint.
type budgetRig struct {
	*harness
	r         *running
	slack     *slacktest.Server
	approvals *slack.Approvals
	endpoint  http.Handler
	alerts    atomic.Int32
}

func newBudgetRig(t *testing.T) *budgetRig {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	ps, err := budget.ParseFile("svc.yaml", []byte(svcPolicy))
	if err != nil {
		t.Fatal(err)
	}
	store, err := budget.OpenStore(ctx, h.env.JS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, ps[0], "test", t0); err != nil {
		t.Fatal(err)
	}
	br := &budgetRig{harness: h, slack: slacktest.New(t, slackToken)}
	log := slog.New(slog.DiscardHandler)
	api := slackapi.New(slackToken, slackapi.OptionAPIURL(br.slack.URL))
	br.approvals = slack.NewApprovals(api, "C0FINOPS01", bus.NewPublisher(h.env.JS), h.clock.Now, log)
	br.endpoint = slack.NewInteractionHandler(slack.NewVerifier(slackSecret, h.clock.Now), br.approvals, log)
	b := arbiter.NewBudgets(arbiter.BudgetOptions{Config: h.cfg, JS: h.env.JS, Asker: br.approvals, Clock: h.clock,
		Log: log, OnAlert: func(context.Context, *events.BudgetAlert) { br.alerts.Add(1) }})
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Run(bctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("budgets: %v", err)
		}
	})
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := b.Ready(rctx); err != nil {
		t.Fatal(err)
	}
	br.r = h.start("a1", func(o *arbiter.Options) { o.Gate, o.Caps = b, b })
	b.Attach(br.r.Service)
	br.approvals.OnDecision = b.Decided
	return br
}

// click sends the signed block_actions request Slack would send for user's click on button.
func (br *budgetRig) click(t *testing.T, user, button, planID string) int {
	raw, err := os.ReadFile("../slack/testdata/block_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(raw), "U0APPROVER", user)
	s = strings.ReplaceAll(s, "bursar_approve", button)
	s = strings.ReplaceAll(s, "PLAN_ID", planID)
	body := []byte("payload=" + url.QueryEscape(s))
	req := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	ts := br.clock.Now().Unix()
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", slack.Sign(slackSecret, ts, body))
	w := httptest.NewRecorder()
	br.endpoint.ServeHTTP(w, req)
	return w.Code
}

// asked waits until n approval requests are posted and pending, and returns their ids.
func (br *budgetRig) asked(t *testing.T, n int) []string {
	t.Helper()
	br.slack.WaitFor(t, n)
	eventually(t, "the requests are pending", func() bool { return len(br.approvals.Pending()) == n })
	return br.approvals.Pending()
}

func (br *budgetRig) awaiting(id string) bool {
	b := br.r.Books()["svc"]
	return b != nil && slices.ContainsFunc(b.Actions, func(r arbiter.Record) bool {
		return r.Target.ActionID == id && r.Stage == arbiter.StageAwaiting
	})
}

func TestBudgetHoldsAScaleUpUntilAnApproverSaysYes(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t)
	ids := []string{br.price("us-east-1a", events.Spot, 3), br.price("us-east-1b", events.Spot, 3)}
	eventually(t, "the arbiter leads", br.r.Leading)
	eventually(t, "the prices are folded", func() bool { return br.r.KnowsPrice(ids[0], 3) && br.r.KnowsPrice(ids[1], 3) })
	br.r.Pass(ctx)

	// Two launches of 3 USD/h each, both over approve_over: two requests, nothing applied.
	pending := br.asked(t, 2)
	if len(pending) != 2 {
		t.Fatalf("pending approvals %v, want 2", pending)
	}
	if calls := br.sim.Calls(); len(calls) != 0 {
		t.Fatalf("the actuator was called %d times before any approval", len(calls))
	}
	yes, late := pending[0], pending[1]
	if !br.awaiting(yes) || !br.awaiting(late) {
		t.Fatalf("the arbiter's books do not hold %s and %s as awaiting approval", yes, late)
	}

	// A stranger's click is refused; the approver's applies the action.
	if code := br.click(t, "U0STRANGER", slack.ActionApprove, yes); code != http.StatusOK {
		t.Fatalf("stranger's click: HTTP %d", code)
	}
	if !br.awaiting(yes) {
		t.Fatal("a non-approver's click changed the action")
	}
	if code := br.click(t, approver, slack.ActionApprove, yes); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	eventually(t, "the approved launch reaches the actuator", func() bool { return br.callsByID()[yes] == 1 })

	// The other request times out: rejected, never applied, its message says so.
	br.clock.Advance(11 * time.Minute)
	br.approvals.Sweep(ctx)
	eventually(t, "the timed-out action leaves the books", func() bool { return !br.awaiting(late) })
	if br.callsByID()[late] != 0 {
		t.Error("a timed-out action reached the actuator")
	}
	var outcomes []string
	for _, m := range br.slack.Messages() {
		if m.Method == "chat.update" {
			outcomes = append(outcomes, m.Text)
		}
	}
	want := []string{"Plan for svc approved by " + approver, "Plan for svc rejected by timeout"}
	if !slices.Equal(outcomes, want) {
		t.Errorf("slack message updates %q, want %q", outcomes, want)
	}
}

func TestBudgetThresholdCrossingAlertsOnce(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t)
	ids := []string{br.price("us-east-1a", events.Spot, 3), br.price("us-east-1b", events.Spot, 3)}
	eventually(t, "the arbiter leads", br.r.Leading)
	eventually(t, "the prices are folded", func() bool { return br.r.KnowsPrice(ids[0], 3) && br.r.KnowsPrice(ids[1], 3) })
	br.r.Pass(ctx)
	for _, id := range br.asked(t, 2) {
		if code := br.click(t, approver, slack.ActionApprove, id); code != http.StatusOK {
			t.Fatalf("approver's click: HTTP %d", code)
		}
	}
	eventually(t, "both launches are applied", func() bool { return br.r.InFlight() == 0 && len(br.sim.Calls()) == 2 })
	br.clock.Advance(31 * time.Second)
	br.r.Report(ctx) // two ready replicas at 3 USD/h: 6 USD/h from here

	br.clock.Advance(3 * time.Hour) // 18 USD: under the 20 USD line
	br.r.Pass(ctx)
	if n := br.alerts.Load(); n != 0 {
		t.Fatalf("%d alerts at 18 USD spent, want none under the 20 USD threshold", n)
	}
	br.clock.Advance(time.Hour) // 24 USD
	eventually(t, "the crossing is announced", func() bool { br.r.Pass(ctx); return br.alerts.Load() > 0 })
	for range 3 {
		br.clock.Advance(time.Hour)
		br.r.Pass(ctx)
	}
	if n := br.alerts.Load(); n != 1 {
		t.Errorf("%d alerts for one crossing, want 1", n)
	}
	st, err := br.env.JS.Stream(ctx, bus.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "bursar.budget.>")
	if err != nil {
		t.Fatalf("no budget.alert in the FLEET stream: %v", err)
	}
	e, err := events.Decode(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := e.(*events.BudgetAlert)
	if !ok || a.Policy != "svc-day" || a.Cleared || a.Spend < 20 || a.Spend > 30 {
		t.Errorf("budget.alert %+v, want svc-day crossed between 20 and 30 USD", e)
	}
}
