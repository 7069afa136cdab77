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
	"github.com/bursar-dev/bursar/internal/system"
)

const (
	slackToken  = "xoxb-test-token"
	slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	approver    = "U0APPROVER"
)

// svcPolicy asks for approval of any plan adding over 1 USD/h to svc, and alerts once svc has
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
// a fake Slack and the signed interactions endpoint. proc is the arbiter process running now.
type budgetRig struct {
	*harness
	slack   *slacktest.Server
	proc    *proc
	onAlert func(context.Context, *events.BudgetAlert) // Slack's post of an alert, after it is counted
}

// proc is what one `arbiter run` holds: the service, its budgets, its approvals and endpoint.
type proc struct {
	r         *running
	budgets   *arbiter.Budgets
	approvals *slack.Approvals
	endpoint  http.Handler
	alerts    atomic.Int32
	stop      context.CancelFunc
}

func newBudgetRig(t *testing.T, fleet, policy string) *budgetRig {
	return newBudgetRigWith(t, fleet, policy, nil)
}

// newBudgetRigWith is newBudgetRig whose alert posts call onAlert.
func newBudgetRigWith(t *testing.T, fleet, policy string, onAlert func(context.Context, *events.BudgetAlert)) *budgetRig {
	h := newHarness(t, fleet)
	br := &budgetRig{harness: h, slack: slacktest.New(t, slackToken), onAlert: onAlert}
	br.setPolicy(t, policy)
	br.proc = br.startProc(t, "a1")
	return br
}

func (br *budgetRig) setPolicy(t *testing.T, policy string) {
	ctx := context.Background()
	ps, err := budget.ParseFile("policy.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	store, err := budget.OpenStore(ctx, br.env.JS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, ps[0], "test", br.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

// startProc starts an arbiter process named id, wired as `arbiter run` wires it, and returns once
// it leads.
func (br *budgetRig) startProc(t *testing.T, id string) *proc {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	p := &proc{}
	api := slackapi.New(slackToken, slackapi.OptionAPIURL(br.slack.URL))
	p.approvals = slack.NewApprovals(api, "C0FINOPS01", bus.NewPublisher(br.env.JS), br.clock.Now, log)
	p.endpoint = slack.NewInteractionHandler(slack.NewVerifier(slackSecret, br.clock.Now), p.approvals, log)
	p.budgets = arbiter.NewBudgets(arbiter.BudgetOptions{Config: br.cfg, JS: br.env.JS, Approvals: system.NewSlackApprovals(p.approvals), Clock: br.clock,
		Log: log, OnAlert: func(ctx context.Context, a *events.BudgetAlert) {
			p.alerts.Add(1)
			if br.onAlert != nil {
				br.onAlert(ctx, a)
			}
		}})
	bctx, cancel := context.WithCancel(ctx)
	p.stop = cancel
	done := make(chan error, 1)
	go func() { done <- p.budgets.Run(bctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("budgets: %v", err)
		}
	})
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := p.budgets.Ready(rctx); err != nil {
		t.Fatal(err)
	}
	p.r = br.start(id, func(o *arbiter.Options) { o.Gate, o.Caps = p.budgets, p.budgets })
	p.budgets.Attach(p.r.Service)
	system.NewSlackApprovals(p.approvals).Answer(p.budgets)
	eventually(t, "the arbiter leads", p.r.Leading)
	return p
}

// kill crashes the process: the arbiter writes nothing more, its budgets and approvals stop.
func (p *proc) kill() {
	p.r.Kill()
	p.r.cancel()
	p.stop()
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
	br.proc.endpoint.ServeHTTP(w, req)
	return w.Code
}

// asked waits until n approval requests are pending in the running process and each one's
// question is posted, and returns them. A request is pending from the moment it is asked, while
// its post may still be on its way to Slack; once Slack answered, the books hold where the
// question is (a resumed request's already do).
func (br *budgetRig) asked(t *testing.T, n int) []string {
	t.Helper()
	eventually(t, "the requests are pending", func() bool { return len(br.proc.approvals.Pending()) == n })
	ids := br.proc.approvals.Pending()
	eventually(t, "the questions are posted", func() bool {
		return !slices.ContainsFunc(ids, func(id string) bool { return !br.posted(id) })
	})
	return ids
}

// posted says whether the running arbiter's books record where the question of hold id was posted.
func (br *budgetRig) posted(id string) bool {
	for _, b := range br.proc.r.Books() {
		if slices.ContainsFunc(b.Holds, func(h arbiter.Hold) bool { return h.ID == id && h.TS != "" }) {
			return true
		}
	}
	return false
}

// awaiting lists the actions of workload w waiting for hold id in the running arbiter's books.
func (br *budgetRig) awaiting(w, id string) []string {
	var out []string
	if b := br.proc.r.Books()[w]; b != nil {
		for _, r := range b.Actions {
			if r.Stage == arbiter.StageAwaiting && r.Hold == id {
				out = append(out, r.Target.ActionID)
			}
		}
	}
	return out
}

// posts counts the approval messages posted.
func (br *budgetRig) posts() int {
	n := 0
	for _, m := range br.slack.Messages() {
		if m.Method == "chat.postMessage" {
			n++
		}
	}
	return n
}

// updates are the texts of the approval messages' updates, in order.
func (br *budgetRig) updates() []string {
	var out []string
	for _, m := range br.slack.Messages() {
		if m.Method == "chat.update" {
			out = append(out, m.Text)
		}
	}
	return out
}

// firstPlan brings svc's two spot launches of 3 USD/h each to a pass: together 6 USD/h, one plan
// over approve_over. It returns the hold's id and its actions.
func (br *budgetRig) firstPlan(t *testing.T) (string, []string) {
	t.Helper()
	// One message: a first plan woken between two prices would launch both in one zone.
	ids := br.h100Prices(events.Spot, 3, "us-east-1a", "us-east-1b")
	r := br.proc.r
	eventually(t, "the prices are folded", func() bool { return r.KnowsPrice(ids[0], 3) && r.KnowsPrice(ids[1], 3) })
	r.Pass(context.Background())
	hold := br.asked(t, 1)[0]
	held := br.awaiting("svc", hold)
	if len(held) != 2 {
		t.Fatalf("hold %s covers %v, want both launches", hold, held)
	}
	return hold, held
}

func TestBudgetHoldsAPlanUntilAnApproverSaysYes(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, svcPolicy)
	hold, held := br.firstPlan(t)
	if n := br.posts(); n != 1 {
		t.Fatalf("%d approval messages for one plan, want 1", n)
	}
	if calls := br.sim.Calls(); len(calls) != 0 {
		t.Fatalf("the actuator was called %d times before any approval", len(calls))
	}
	br.proc.r.Pass(ctx) // proposed again: not asked again
	if n := br.posts(); n != 1 || len(br.proc.approvals.Pending()) != 1 {
		t.Fatalf("a second pass posted %d messages, pending %v", n, br.proc.approvals.Pending())
	}

	// A stranger's click is refused; the approver's applies both launches, each once.
	if code := br.click(t, "U0STRANGER", slack.ActionApprove, hold); code != http.StatusOK {
		t.Fatalf("stranger's click: HTTP %d", code)
	}
	if len(br.awaiting("svc", hold)) != 2 {
		t.Fatal("a non-approver's click changed the plan")
	}
	if code := br.click(t, approver, slack.ActionApprove, hold); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	eventually(t, "both approved launches reach the actuator", func() bool {
		c := br.callsByID()
		return c[held[0]] == 1 && c[held[1]] == 1
	})
	br.onlyOnce(t)
	if got, want := br.updates(), []string{"Plan for svc approved by " + approver}; !slices.Equal(got, want) {
		t.Errorf("slack message updates %q, want %q", got, want)
	}
}

func TestBudgetApprovalTimesOutAndIsNotAskedAgain(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, svcPolicy)
	hold, held := br.firstPlan(t)
	br.clock.Advance(11 * time.Minute)
	br.proc.approvals.Sweep(ctx)
	eventually(t, "the timed-out plan leaves the books", func() bool { return len(br.awaiting("svc", hold)) == 0 })
	if got, want := br.updates(), []string{"Plan for svc rejected by timeout"}; !slices.Equal(got, want) {
		t.Errorf("slack message updates %q, want %q", got, want)
	}
	// The planner proposes the same launches again; a rejected plan is not asked about again
	// while its rejection stands (one approval timeout), and then it is.
	br.proc.r.Pass(ctx)
	if n := br.posts(); n != 1 || len(br.sim.Calls()) != 0 {
		t.Errorf("after the rejection: %d messages, %d actuator calls; want 1 and none", n, len(br.sim.Calls()))
	}
	br.clock.Advance(11 * time.Minute)
	br.proc.r.Pass(ctx)
	br.slack.WaitFor(t, 3)
	if n := br.posts(); n != 2 {
		t.Errorf("%d approval messages once the rejection lapsed, want 2", n)
	}
	for _, id := range held {
		if br.callsByID()[id] != 0 {
			t.Errorf("rejected action %s reached the actuator", id)
		}
	}
}

// moveFleet runs one replica that may move between two spot zones.
const moveFleet = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], egress_per_gb: 0.09, actuator: {kind: sim, launch_delay: 10m}}
  - {name: b, provider: aws, region: us-east-1, zones: [us-east-1b], egress_per_gb: 0.09, actuator: {kind: sim, launch_delay: 10m}}
workloads:
  - name: svc
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 1, max: 1}
    markets: [spot]
    weights_gb: 50
    cold_start: 10m
`

// TestMoveIsJudgedOnItsNetChange: a move's launch adds more than approve_over, but with the
// replica it replaces the plan saves money, so it goes ahead unasked; a plain launch of the same
// size is held.
func TestMoveIsJudgedOnItsNetChange(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, moveFleet, strings.Replace(svcPolicy, "approve_over: 1/h", "approve_over: 0.5/h", 1))
	r := br.proc.r
	b := br.price("us-east-1b", events.Spot, 3.0)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(b, 3.0) })
	r.Pass(ctx)
	first := br.asked(t, 1)[0] // the first replica adds 3 USD/h: asked
	if code := br.click(t, approver, slack.ActionApprove, first); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	eventually(t, "the first replica is launched", func() bool { return len(br.sim.Calls()) == 1 })
	br.clock.Advance(11 * time.Minute)
	br.settle(ctx, r)

	// The incumbent at 3.00/h is worth keeping at 3.00 less its move cost (5.00 over 6 h) less
	// 0.05: 2.12; a spot offer never tried counts at twice its price, so 1.00 (as 2.00) wins.
	br.clock.Advance(time.Second)
	a := br.price("us-east-1a", events.Spot, 1.0)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(a, 1.0) })
	br.settle(ctx, r)
	var move string
	for _, c := range br.sim.Calls() {
		if c.Kind == "launch" && c.Reason == "cheaper_offer" && c.Location == "a" {
			move = c.ActionID
		}
	}
	if move == "" || br.posts() != 1 {
		t.Fatalf("the move (+1.00 launch, -3.00 replaced) was not applied unasked: %d messages, calls %+v",
			br.posts(), br.sim.Calls())
	}
	br.clock.Advance(11 * time.Minute)
	br.settle(ctx, r)
	br.settle(ctx, r)
	last := br.sim.Calls()[len(br.sim.Calls())-1]
	if last.Kind != "drain" || last.Location != "b" {
		t.Errorf("last call %+v, want the old replica drained once the new one is ready", last)
	}
	br.onlyOnce(t)
}

func TestBudgetThresholdCrossingAlertsOnce(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, svcPolicy)
	hold, _ := br.firstPlan(t)
	if code := br.click(t, approver, slack.ActionApprove, hold); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	r := br.proc.r
	eventually(t, "both launches are applied", func() bool { return r.InFlight() == 0 && len(br.sim.Calls()) == 2 })
	br.clock.Advance(31 * time.Second)
	r.Report(ctx) // two ready replicas at 3 USD/h: 6 USD/h from here

	br.clock.Advance(3 * time.Hour) // 18 USD: under the 20 USD line
	r.Pass(ctx)
	if n := br.proc.alerts.Load(); n != 0 {
		t.Fatalf("%d alerts at 18 USD spent, want none under the 20 USD threshold", n)
	}
	br.clock.Advance(time.Hour) // 24 USD
	eventually(t, "the crossing is announced", func() bool { r.Pass(ctx); return br.proc.alerts.Load() > 0 })
	for range 3 {
		br.clock.Advance(time.Hour)
		r.Pass(ctx)
	}
	if n := br.proc.alerts.Load(); n != 1 {
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

// TestASlowSlackDoesNotHoldThePass: a Slack that does not answer a budget alert costs that post,
// never the planning pass, which is the path from a reclaim to its action and renews the lease.
func TestASlowSlackDoesNotHoldThePass(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	br := newBudgetRigWith(t, fleetYAML, svcPolicy, func(ctx context.Context, _ *events.BudgetAlert) {
		select { // Slack does not answer
		case <-release:
		case <-ctx.Done():
		}
	})
	defer close(release)
	hold, _ := br.firstPlan(t)
	if code := br.click(t, approver, slack.ActionApprove, hold); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	r := br.proc.r
	eventually(t, "both launches are applied", func() bool { return r.InFlight() == 0 && len(br.sim.Calls()) == 2 })
	br.clock.Advance(31 * time.Second)
	r.Report(ctx)                   // 6 USD/h from here
	br.clock.Advance(4 * time.Hour) // 24 USD: over the 20 USD line
	passed := make(chan struct{})
	go func() {
		defer close(passed)
		for br.proc.alerts.Load() == 0 {
			r.Pass(ctx)
		}
		r.Pass(ctx) // while Slack sits on the post
	}()
	select {
	case <-passed:
	case <-time.After(time.Minute):
		t.Fatal("the planning pass is waiting for Slack to answer a budget alert")
	}
}
