package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	fleetfile "github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	bslack "github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
	"github.com/bursar-dev/bursar/internal/system"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// flowFleet is two workloads of team search on simulated spot capacity.
const flowFleet = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim, launch_delay: 30s}}
  - {name: b, provider: aws, region: us-east-1, zones: [us-east-1b], actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - {name: llm, team: search, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 1, max: 1}, markets: [spot]}
  - {name: emb, team: search, gpu: {models: [A100-80GB], count: 1}, replicas: {min: 1, max: 1}, markets: [spot]}
`

const (
	flowToken  = "xoxb-test"
	flowSecret = "signing-secret"
	approverID = "U0APPROVER"
)

// flow is the arbiter process of the script, wired as `arbiter run` wires it, with a fake Slack.
type flow struct {
	t         *testing.T
	env       *bustest.Env
	clock     *testkit.Clock
	sim       *sim.Fleet
	slack     *slacktest.Server
	approvals *bslack.Approvals
	budgets   *arbiter.Budgets
	endpoint  http.Handler
	reg       *prometheus.Registry
	logs      *testkit.Log
	pub       *bus.Publisher
}

func startFlow(t *testing.T, env *bustest.Env, day time.Time) *flow {
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := fleetfile.Parse([]byte(flowFleet), "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := &flow{t: t, env: env, clock: testkit.NewClock(day), slack: slacktest.New(t, flowToken), reg: prometheus.NewRegistry(),
		logs: &testkit.Log{}, pub: bus.NewPublisher(env.JS)}
	f.sim = sim.New(cfg, f.clock.Now)
	log := slog.New(slog.NewTextHandler(f.logs, nil))
	api := slack.New(flowToken, slack.OptionAPIURL(f.slack.URL))
	f.approvals = bslack.NewApprovals(api, "C0FINOPS01", f.pub, f.clock.Now, log)
	f.endpoint = bslack.NewInteractionHandler(bslack.NewVerifier(flowSecret, f.clock.Now), f.approvals, log)
	budgets := arbiter.NewBudgets(arbiter.BudgetOptions{Config: cfg, JS: env.JS, Approvals: system.NewSlackApprovals(f.approvals),
		Clock: f.clock, Log: log})
	system.NewSlackApprovals(f.approvals).Answer(budgets)
	f.budgets = budgets
	svc, err := arbiter.New(ctx, arbiter.Options{Config: cfg, JS: env.JS, Actuator: actuate.Router{"a": f.sim, "b": f.sim},
		Log: log, Registry: f.reg, Clock: f.clock, Gate: budgets, Caps: budgets, Identity: "flow", LeaseTTL: time.Second,
		Policy: placement.Policy{MaxHedge: -1}, Debounce: 5 * time.Millisecond, Interval: 20 * time.Millisecond,
		ReportEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	budgets.Attach(svc)
	var wg sync.WaitGroup
	wg.Go(func() { _ = budgets.Run(ctx) })
	wg.Go(func() { _ = f.approvals.Run(ctx, 10*time.Millisecond) })
	wg.Go(func() {
		if budgets.Ready(ctx) == nil {
			_ = svc.Run(ctx)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return f
}

// at moves the clock to d after the day began and waits for two planning passes to run at it.
func (f *flow) at(day time.Time, d time.Duration) {
	f.t.Helper()
	f.clock.Set(day.Add(d))
	n := f.passes()
	waitFor(f.t, "two planning passes", func() bool { return f.passes() >= n+2 })
}

// passes counts the planning passes the arbiter finished.
func (f *flow) passes() uint64 {
	mfs, err := f.reg.Gather()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "bursar_arbiter_plan_duration_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}

func (f *flow) price(zone, model string, usd float64) {
	f.t.Helper()
	e := &events.PriceObserved{Meta: events.Meta{At: f.clock.Now()}, Provider: "aws", Region: "us-east-1", Zone: zone,
		InstanceType: "p5.xlarge", GPUModel: model, GPUCount: 1, GPUMemoryGB: 80, Market: events.Spot, USDPerHour: usd,
		Source: "script"}
	if err := f.pub.Publish(context.Background(), e); err != nil {
		f.t.Fatal(err)
	}
}

// interaction is the form body Slack posts for user's click on button of the plan.
func interaction(user, button, plan string) []byte {
	cb := map[string]any{"type": "block_actions", "user": map[string]string{"id": user},
		"channel": map[string]string{"id": "C0FINOPS01"},
		"actions": []map[string]string{{"type": "button", "action_id": button, "block_id": "bursar_approval", "value": plan}}}
	raw, _ := json.Marshal(cb)
	return []byte("payload=" + url.QueryEscape(string(raw)))
}

// send posts body to the interactions endpoint signed with secret at ts; it returns the status.
func (f *flow) send(body []byte, secret string, ts time.Time) int {
	req := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", bslack.Sign(secret, ts.Unix(), body))
	w := httptest.NewRecorder()
	f.endpoint.ServeHTTP(w, req)
	return w.Code
}

// calls are the actuator's calls by action id.
func (f *flow) calls() map[string]int {
	out := map[string]int{}
	for _, c := range f.sim.Calls() {
		out[c.ActionID]++
	}
	return out
}

// steps are the FLEET stream's action.updated events as workload:action:status:actor. The actor
// of awaiting_approval is left out: the arbiter and the approvals both announce that step, and
// whichever is first is kept.
func (f *flow) steps() []string {
	var out []string
	for _, e := range fleet(f.t, f.env, "bursar.action.>") {
		u := e.(*events.ActionUpdated)
		s := u.Workload + ":" + u.ActionID + ":" + string(u.Status)
		if u.Status != events.ActionAwaitingApproval {
			s += ":" + u.Actor
		}
		out = append(out, s)
	}
	return out
}

// TestBudgetFlowScript is issue 8's script, run through the real arbiter: a budget set with the
// CLI twice (by alice, then bob, each as their own NATS user, through the arbiter), the arbiter
// with the sim actuator and a fake Slack over scripted prices; a plan that needs approval (a Slack message with buttons), a non-approver's click refused, an
// approver's signed click applying it; spend crossing 80% (one alert); a second plan timing out
// (rejected, message updated); forged, stale and replayed requests refused; every outcome an
// action.updated event; and `arbiter budget history` showing both revisions.
func TestBudgetFlowScript(t *testing.T) {
	people := startBudgetBus(t, "alice", "bob")
	env := people.Env
	ctx := context.Background()
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	f := startFlow(t, env, day)
	// The arbiter answers budget writes once it runs; alice and bob each set the budget as
	// their own NATS user, and the arbiter records who.
	waitFor(t, "the arbiter runs", func() bool { return f.passes() > 0 })
	people.mustCLI(t, "alice", "budget", "set", "search-daily", "--scope", "team=search", "--period", "day",
		"--limit", "100", "--alert", "80%", "--approve-over", "5/h", "--approvers", approverID)
	people.mustCLI(t, "bob", "budget", "set", "search-daily", "--scope", "team=search", "--period", "day",
		"--limit", "100", "--alert", "80%", "--approve-over", "5/h", "--approvers", approverID,
		"--approval-timeout", "20m")
	// A write is answered once it is stored; the gate hears of it from the bucket a moment later.
	waitFor(t, "bob's revision is in force", func() bool {
		ps := f.budgets.Policies()
		return len(ps) == 1 && time.Duration(ps[0].ApprovalTimeout) == 20*time.Minute
	})

	// 00:00: llm's only offer costs 6 USD/h, over the 5/h a plan may add unasked.
	f.price("us-east-1a", "H100-80GB", 6)
	msg := f.slack.WaitFor(t, 1)[0]
	if msg.Method != "chat.postMessage" || !strings.Contains(string(msg.Blocks), `"action_id":"bursar_approve"`) ||
		!strings.Contains(string(msg.Blocks), `"action_id":"bursar_reject"`) {
		t.Fatalf("approval message without Approve and Reject buttons: %+v", msg)
	}
	waitFor(t, "the request is pending", func() bool { return len(f.approvals.Pending()) == 1 })
	first := f.approvals.Pending()[0]
	f.at(day, 0)
	if n := len(f.sim.Calls()); n != 0 {
		t.Fatalf("%d actuator calls before the approval", n)
	}

	// A non-approver's click is refused privately; the approver's applies the launch.
	if code := f.send(interaction("U0INTERN", bslack.ActionApprove, first), flowSecret, f.clock.Now()); code != http.StatusOK {
		t.Fatalf("non-approver's click: HTTP %d", code)
	}
	if m := f.slack.WaitFor(t, 2)[1]; m.Method != "chat.postEphemeral" || m.User != "U0INTERN" {
		t.Errorf("the non-approver was not told: %+v", m)
	}
	f.at(day, time.Minute)
	if len(f.approvals.Pending()) != 1 || len(f.sim.Calls()) != 0 {
		t.Fatalf("a non-approver's click decided: pending %v, calls %v", f.approvals.Pending(), f.sim.Calls())
	}
	approval := interaction(approverID, bslack.ActionApprove, first)
	approvedAt := f.clock.Now()
	if code := f.send(approval, flowSecret, approvedAt); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	waitFor(t, "the approved launch is applied", func() bool { return len(f.sim.Calls()) == 1 })
	launch := f.sim.Calls()[0].ActionID
	approved := f.slack.WaitFor(t, 3)[2]
	if approved.Method != "chat.update" || approved.TS != msg.TS || !strings.Contains(approved.Text, "approved by "+approverID) {
		t.Errorf("the approval message was not updated with the outcome: %+v", approved)
	}
	// The same signed click sent again (a replay) is refused with 401, logged, and changes nothing.
	if code := f.send(approval, flowSecret, approvedAt); code != http.StatusUnauthorized || !strings.Contains(f.logs.String(), "already seen") {
		t.Errorf("replayed request: HTTP %d, want 401 and the replay logged", code)
	}

	// llm runs at 6 USD/h from 00:01: 78 USD at 13:01, under 80% of 100; 84 USD at 14:01.
	f.at(day, 2*time.Minute) // the launch is ready
	f.at(day, 13*time.Hour+time.Minute)
	if a := fleet(t, env, "bursar.budget.>"); len(a) != 0 {
		t.Fatalf("alerts at 78 USD: %v", a)
	}
	f.at(day, 14*time.Hour+time.Minute)
	waitFor(t, "the 80% crossing is announced", func() bool { return len(fleet(t, env, "bursar.budget.>")) > 0 })
	for h := 15; h <= 17; h++ {
		f.at(day, time.Duration(h)*time.Hour)
	}
	alerts := fleet(t, env, "bursar.budget.>")
	if len(alerts) != 1 {
		t.Fatalf("%d budget alerts, want one for the 80%% crossing: %v", len(alerts), alerts)
	}
	if a := alerts[0].(*events.BudgetAlert); a.Policy != "search-daily" || a.Threshold != "80%" || a.Cleared || a.Spend < 80 || a.Spend > 90 {
		t.Errorf("alert %+v, want search-daily crossing 80%% between 80 and 90 USD", a)
	}

	// 17:00: emb's offer appears at 7 USD/h: a second plan that needs approval; nobody answers.
	f.price("us-east-1b", "A100-80GB", 7)
	asked := f.slack.WaitFor(t, 4)[3]
	waitFor(t, "the second request is pending", func() bool { return len(f.approvals.Pending()) == 1 })
	second := f.approvals.Pending()[0]

	// Forged and stale requests are refused with 401, logged, and change nothing.
	now := f.clock.Now()
	refused := []struct {
		name string
		code int
		want string
	}{
		{"forged", f.send(interaction(approverID, bslack.ActionApprove, second), "not-the-secret", now), "signature does not match"},
		{"stale", f.send(interaction(approverID, bslack.ActionApprove, second), flowSecret, now.Add(-6*time.Minute)), "more than 5 minutes"},
	}
	for _, r := range refused {
		if r.code != http.StatusUnauthorized || !strings.Contains(f.logs.String(), r.want) {
			t.Errorf("%s request: HTTP %d, want 401 and %q logged", r.name, r.code, r.want)
		}
	}
	if got := f.approvals.Pending(); !slices.Equal(got, []string{second}) || len(f.slack.Messages()) != 4 {
		t.Errorf("refused requests changed something: pending %v, %d slack messages", got, len(f.slack.Messages()))
	}

	// 17:21: past the 20 minute timeout: rejected, the message updated, emb never launched.
	f.at(day, 17*time.Hour+21*time.Minute)
	last := f.slack.WaitFor(t, 5)[4]
	if last.Method != "chat.update" || last.TS != asked.TS || !strings.Contains(last.Text, "rejected by timeout") {
		t.Errorf("the timed-out plan's message = %+v", last)
	}
	f.at(day, 17*time.Hour+22*time.Minute) // proposed again, not asked again
	if n := len(f.slack.Messages()); n != 5 || len(f.sim.Calls()) != 1 {
		t.Errorf("after the timeout: %d slack messages, %d actuator calls; want 5 and 1", n, len(f.sim.Calls()))
	}

	// Every outcome is an action.updated event.
	waitFor(t, "the launch is recorded as applied", func() bool { return slices.Contains(f.steps(), "llm:"+launch+":applied:arbiter/flow") })
	steps := f.steps()
	var emb string
	for _, s := range steps {
		if strings.HasPrefix(s, "emb:") {
			emb = strings.Split(s, ":")[1]
		}
	}
	want := []string{"llm:" + launch + ":awaiting_approval", "llm:" + launch + ":approved:" + approverID,
		"llm:" + launch + ":applied:arbiter/flow", "emb:" + emb + ":awaiting_approval", "emb:" + emb + ":rejected:timeout"}
	if !slices.Equal(steps, want) {
		t.Errorf("action.updated =\n%s\nwant\n%s", strings.Join(steps, "\n"), strings.Join(want, "\n"))
	}
	if f.calls()[launch] != 1 {
		t.Errorf("the approved launch reached the actuator %d times, want once", f.calls()[launch])
	}

	hist := people.mustCLI(t, bus.RoleBudget, "budget", "history", "search-daily", "-o", "json")
	var revs []budget.Revision
	if err := json.Unmarshal([]byte(hist), &revs); err != nil || len(revs) != 2 || revs[0].Actor != "alice" || revs[1].Actor != "bob" {
		t.Errorf("history:\n%s", hist)
	}
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fleet reads the FLEET stream's events on subject, in order.
func fleet(t *testing.T, env *bustest.Env, subject string) []events.Event {
	t.Helper()
	return bustest.Events(t, env.JS, bus.Fleet, subject)
}
