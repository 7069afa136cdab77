package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
	bslack "github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// TestBudgetFlowScript is issue 8's script: a budget set with the CLI, a replay whose spend
// crosses 80% (one alert), a plan that needs approval (a Slack message with buttons), a
// non-approver's click refused, an approver's click applying the plan, a second plan timing out,
// and the policy's history showing both revisions.
func TestBudgetFlowScript(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	cli := func(args ...string) string {
		t.Helper()
		out, err := arbiterCLI(t, env.URL, args...)
		if err != nil {
			t.Fatalf("arbiter %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	cli("budget", "set", "llm-daily", "--actor", "alice", "--scope", "workload=llm", "--period", "day",
		"--limit", "1000", "--alert", "80%", "--approve-over", "5/h", "--approvers", "U0APPROVER")
	cli("budget", "set", "llm-daily", "--actor", "bob", "--scope", "workload=llm", "--period", "day",
		"--limit", "1000", "--alert", "50%,80%", "--approve-over", "5/h", "--approvers", "U0APPROVER",
		"--approval-timeout", "20m")

	store, err := budget.OpenStore(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	policies, err := store.List(ctx)
	if err != nil || len(policies) != 1 {
		t.Fatalf("policies = %v, %v", policies, err)
	}
	gate := budget.NewGate()
	gate.SetPolicies([]budget.Policy{policies[0].Policy})

	// Replay a day: 4 replicas at 10 USD/h from midnight; 80% of 1000 is spent at 20:00.
	day := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	var ledger budget.Ledger
	ledger.Observe(&events.ReplicaState{Meta: events.Meta{At: day}, Workload: "llm", Location: "gcp-usc1",
		Provider: "gcp", Market: events.Spot, Offer: "a3", USDPerHour: 10, Desired: 4, Ready: 4})
	pub := bus.NewPublisher(env.JS)
	for h := 1; h <= 23; h++ {
		for _, a := range gate.Evaluate(day.Add(time.Duration(h)*time.Hour), ledger.Intervals(day)) {
			if err := pub.Publish(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	alerts := fleet(t, env, "bursar.budget.>")
	if len(alerts) != 2 || alerts[0].(*events.BudgetAlert).Threshold != "50%" || alerts[1].(*events.BudgetAlert).Threshold != "80%" {
		t.Fatalf("budget alerts = %v, want 50%% then 80%% once", alerts)
	}

	// Slack and the approval path.
	now := day.Add(20 * time.Hour)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	fake := slacktest.New(t, "xoxb-test")
	approvals := bslack.NewApprovals(slack.New("xoxb-test", slack.OptionAPIURL(fake.URL)), "C0FINOPS01", pub, clock, slog.New(slog.DiscardHandler))
	applied := make(chan string, 4)
	approvals.OnDecision = func(ctx context.Context, d bslack.Decision) {
		if d.Status == events.ActionApproved {
			applied <- d.Plan.PlanID // the arbiter would apply the plan here
		}
	}
	handler := bslack.NewInteractionHandler(bslack.NewVerifier("signing-secret", clock), approvals, slog.New(slog.DiscardHandler))

	askFor := func(id string) {
		t.Helper()
		plan := budget.Plan{ID: id, Workload: "llm", Changes: []budget.Change{{ActionID: id + "-launch",
			Kind: placement.ActionLaunch, Reason: placement.ReasonDemandUp, Provider: "gcp", Location: "gcp-usc1", USDPerHour: 10}}}
		v := gate.Review(ctx, plan, clock())
		if v.Outcome != budget.NeedsApproval || v.Timeout != 20*time.Minute {
			t.Fatalf("verdict = %+v, want needs approval for 20m", v)
		}
		ev := events.PlanDecided{Meta: events.Meta{At: clock()}, Workload: "llm", PlanID: id, USDPerHourWas: 40, USDPerHourNow: 50,
			Actions: []events.PlanAction{{ID: id + "-launch", Kind: "launch", Location: "gcp-usc1", Offer: "a3",
				Market: events.Spot, Replicas: 5, Delta: 1, Reason: "demand_up"}}}
		if err := approvals.Ask(ctx, bslack.RequestFor(ev, v)); err != nil {
			t.Fatal(err)
		}
	}
	click := func(user, id string) {
		t.Helper()
		cb := map[string]any{"type": "block_actions", "user": map[string]string{"id": user},
			"channel": map[string]string{"id": "C0FINOPS01"},
			"actions": []map[string]string{{"type": "button", "action_id": bslack.ActionApprove, "block_id": "bursar_approval", "value": id}}}
		raw, _ := json.Marshal(cb)
		body := []byte("payload=" + url.QueryEscape(string(raw)))
		req := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(body))
		ts := clock().Unix()
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("X-Slack-Signature", bslack.Sign("signing-secret", ts, body))
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("click by %s: HTTP %d", user, w.Code)
		}
	}

	askFor("plan-1")
	if m := fake.WaitFor(t, 1)[0]; !strings.Contains(string(m.Blocks), `"action_id":"bursar_approve"`) {
		t.Fatalf("approval message has no Approve button: %s", m.Blocks)
	}
	click("U0INTERN", "plan-1")
	if got := approvals.Pending(); len(got) != 1 {
		t.Fatalf("a non-approver's click decided: pending %v", got)
	}
	click("U0APPROVER", "plan-1")
	select {
	case id := <-applied:
		if id != "plan-1" {
			t.Errorf("applied %s", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the approved plan was never applied")
	}

	askFor("plan-2")
	mu.Lock()
	now = now.Add(21 * time.Minute)
	mu.Unlock()
	approvals.Sweep(ctx)
	last := fake.Messages()[len(fake.Messages())-1]
	if last.Method != "chat.update" || !strings.Contains(last.Text, "rejected by timeout") {
		t.Errorf("timed-out plan's message = %+v", last)
	}
	var got []string
	for _, e := range fleet(t, env, "bursar.action.>") {
		u := e.(*events.ActionUpdated)
		got = append(got, u.PlanID+":"+string(u.Status)+":"+u.Actor)
	}
	want := "plan-1:awaiting_approval:bursar plan-1:approved:U0APPROVER plan-2:awaiting_approval:bursar plan-2:rejected:timeout"
	if strings.Join(got, " ") != want {
		t.Errorf("action.updated = %v\nwant %s", got, want)
	}

	hist := cli("budget", "history", "llm-daily")
	if !strings.Contains(hist, "alice") || !strings.Contains(hist, "bob") || strings.Count(hist, "llm-daily") != 2 {
		t.Errorf("history:\n%s", hist)
	}
}

// fleet reads the FLEET stream's events on subject, in order.
func fleet(t *testing.T, env *bustest.Env, subject string) []events.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := env.JS.Stream(ctx, bus.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range info.State.Subjects {
		n += int(c)
	}
	if n == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(n)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Event
	for m := range batch.Messages() {
		e, err := events.Decode(m.Data())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}
