package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	bslack "github.com/bursar-dev/bursar/internal/slack"
)

// marketClock is a settable market time.
type marketClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *marketClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *marketClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// approvalsOn is Bursar's Slack approvals on the fake, with its signed interaction endpoint, on a
// real JetStream; decisions are collected.
func approvalsOn(t *testing.T, f *fakeSlack, clk *marketClock) (*bslack.Approvals, string, func() []bslack.Decision) {
	env := bustest.Start(t)
	log := slog.New(slog.DiscardHandler)
	a := bslack.NewApprovals(slackgo.New(slackToken, slackgo.OptionAPIURL(f.url)), slackChannel,
		bus.NewPublisher(env.JS), clk.now, log)
	var mu sync.Mutex
	var got []bslack.Decision
	a.OnDecision = func(_ context.Context, d bslack.Decision) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
		return nil
	}
	srv := httptest.NewServer(bslack.NewInteractionHandler(bslack.NewVerifier(slackSecret, time.Now), a, log))
	t.Cleanup(srv.Close)
	return a, srv.URL, func() []bslack.Decision { mu.Lock(); defer mu.Unlock(); return append([]bslack.Decision(nil), got...) }
}

func request(hold string) bslack.Request {
	return bslack.Request{Plan: events.PlanDecided{PlanID: hold, Workload: "svc", USDPerHourWas: 3, USDPerHourNow: 4,
		Actions: []events.PlanAction{{ID: hold + "-a", Kind: "launch", Location: "z1", Offer: "z1/z1/replay/spot",
			Market: events.Spot, Replicas: 1, Delta: 1, Reason: "hedge", NeedsApproval: true}}},
		Approvers: []string{slackApprover}, Timeout: approvalTimeout}
}

// TestFakeSlackTakesAsksAndClicksAsSlackDoes: Bursar's own Slack client posts a question to the
// fake, which reads the hold and deadline from the message; at the seeded moment its approver's
// click, signed as Slack signs it, reaches Bursar's interaction endpoint and decides the hold as
// the seed said; the decision's chat.update is seen. A refusing Slack fails the ask.
func TestFakeSlackTakesAsksAndClicksAsSlackDoes(t *testing.T) {
	ctx := context.Background()
	clk := &marketClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := newFakeSlack(clk.now, 7)
	defer f.close()
	a, endpoint, decided := approvalsOn(t, f, clk)

	if _, err := a.Ask(ctx, request("hold-1")); err != nil {
		t.Fatal(err)
	}
	got := f.snapshot()["hold-1"]
	if got.messages != 1 || !got.deadline.Equal(clk.now().Add(approvalTimeout)) {
		t.Fatalf("the fake saw %+v, want one message with the deadline %s", got, clk.now().Add(approvalTimeout))
	}
	if got.plan == "" || got.nth != 1 {
		t.Fatalf("the fake read plan %q (ask %d) from the question, want its plan lines, first ask", got.plan, got.nth)
	}
	drawn, due := decide(7, got.plan, 1, got.deadline)
	if got.choice != drawn || !got.due.Equal(due) {
		t.Errorf("approver will %s at %s, the seed says %s at %s", got.choice, got.due, drawn, due)
	}
	f.clickDue(ctx, endpoint, func(string) bool { return true })
	if len(decided()) != 0 {
		t.Fatalf("decided before the approver's moment: %+v", decided())
	}
	clk.add(due.Sub(clk.now()))
	f.clickDue(ctx, endpoint, func(string) bool { return true })
	want := map[choice]events.ActionStatus{approve: events.ActionApproved, reject: events.ActionRejected, lateApprove: events.ActionRejected}[drawn]
	if d := decided(); len(d) != 1 || d[0].Status != want {
		t.Fatalf("decisions %+v, want one %s", d, want)
	}
	if o := f.snapshot()["hold-1"].outcome; o == "" {
		t.Error("the fake did not see the message updated with the decision")
	}

	f.srv.Refuse()
	for i := range 2 { // a 429 ratelimited, then a 503
		_, err := a.Ask(ctx, request("hold-"+string(rune('2'+i))))
		var rl *slackgo.RateLimitedError
		if err == nil || i == 0 && !errors.As(err, &rl) {
			t.Errorf("ask %d while Slack refuses: %v, want an error (the first rate limited)", i, err)
		}
	}
	if n := len(f.snapshot()); n != 1 {
		t.Errorf("the fake holds %d questions, want only the first (refused posts post nothing)", n)
	}
}

// TestFakeSlackAnswersARestoreWithKeepOrGoBack: a question asked after a restore is read as one,
// and its approver answers it at the seeded moment with Go back (approving the go-backs) or Keep
// (rejecting them), as it answers any question with Approve or Reject.
func TestFakeSlackAnswersARestoreWithKeepOrGoBack(t *testing.T) {
	ctx := context.Background()
	seen := map[events.ActionStatus]bool{}
	for seed := uint64(1); len(seen) < 2 && seed < 40; seed++ {
		clk := &marketClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
		f := newFakeSlack(clk.now, seed)
		t.Cleanup(f.close)
		a, endpoint, decided := approvalsOn(t, f, clk)
		req := request("hold-1")
		req.Restored = true
		req.Plan.Actions[0].Kind, req.Plan.Actions[0].Delta, req.Plan.Actions[0].Reason = "drain", -1, "go_back"
		if _, err := a.Ask(ctx, req); err != nil {
			t.Fatal(err)
		}
		got := f.snapshot()["hold-1"]
		if !got.restored {
			t.Fatalf("the fake did not read %+v as asked after a restore", got)
		}
		clk.add(got.due.Sub(clk.now()))
		f.clickDue(ctx, endpoint, func(string) bool { return true })
		want := map[choice]events.ActionStatus{approve: events.ActionApproved, reject: events.ActionRejected, lateApprove: events.ActionRejected}[got.choice]
		if d := decided(); len(d) != 1 || d[0].Status != want {
			t.Fatalf("seed %d: decisions %+v, want one %s (the approver's %s)", seed, d, want, got.choice)
		}
		if o := f.snapshot()["hold-1"].outcome; !strings.Contains(o, "kept by ") && !strings.Contains(o, "gone back on by ") {
			t.Errorf("seed %d: outcome %q, want kept or gone back on", seed, o)
		}
		seen[want] = true
	}
	if len(seen) != 2 {
		t.Errorf("over the seeds the approver only %v", seen)
	}
}

// TestDecideIsSeeded: the approver's choice and its delay from the ask depend on the seed, the
// plan and how many times it was asked alone (the same plan asked an hour or a few ticks later is
// decided the same way, as long after its ask), and the seed's draws cover every choice.
func TestDecideIsSeeded(t *testing.T) {
	start := time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC)
	seen := map[choice]int{}
	for i := range 200 {
		plan := fmt.Sprintf("• launch svc (+%d) on z%d/spot at z%d, hedge", 1+i%3, i, i)
		deadline := start.Add(time.Duration(i) * 7 * time.Minute)
		c, at := decide(3, plan, 1, deadline)
		for _, shift := range []time.Duration{2 * tickLength, 25 * time.Minute, 3 * time.Hour} {
			if c2, at2 := decide(3, plan, 1, deadline.Add(shift)); c2 != c || !at2.Equal(at.Add(shift)) {
				t.Fatalf("plan %q: %s at %s; asked %s later: %s at %s", plan, c, at, shift, c2, at2)
			}
		}
		if late := !at.Before(deadline); late != (c == lateApprove) {
			t.Errorf("deadline %s: %s at %s", deadline, c, at)
		}
		seen[c]++
	}
	if len(seen) != 3 {
		t.Errorf("choices drawn: %v, want all three", seen)
	}
}

// TestCalmAndFaultedRunsFaceTheSameApprover: two runs of one seed ask the same plans, one of them
// 25 min later (a fault delayed it, across an hour), under other hold ids (other action ids) and
// on other offers of the same kind;
// each plan gets the same answer, as long after its ask, in both. A plan asked again (after a
// rejection) is a new question with a draw of its own, the same in both runs.
func TestCalmAndFaultedRunsFaceTheSameApprover(t *testing.T) {
	ctx := context.Background()
	type run struct {
		clk *marketClock
		f   *fakeSlack
		a   *bslack.Approvals
	}
	var runs [2]run
	for i := range runs {
		clk := &marketClock{t: time.Date(2024, 1, 1, 0, 40, 0, 0, time.UTC).Add(time.Duration(i) * 25 * time.Minute)}
		f := newFakeSlack(clk.now, 11)
		defer f.close()
		a, _, _ := approvalsOn(t, f, clk)
		runs[i] = run{clk, f, a}
	}
	var holds [2][]string
	for n := range 24 {
		for i, r := range runs {
			req := request(fmt.Sprintf("run%d-hold%d", i, n))
			req.Plan.Actions[0].Delta = 1 + n%12 // each plan twice
			// The fleet's count and the planner's pick among like offers: not what the plan does.
			req.Plan.Actions[0].Replicas = 1 + i + n
			req.Plan.Actions[0].Offer = fmt.Sprintf("z%d/z%d/replay/spot", i+n, i+n)
			if _, err := r.a.Ask(ctx, req); err != nil {
				t.Fatal(err)
			}
			holds[i] = append(holds[i], req.Plan.PlanID)
			r.clk.add(17 * time.Minute)
		}
	}
	calm, faulted := runs[0].f.snapshot(), runs[1].f.snapshot()
	for n := range holds[0] {
		c, f := calm[holds[0][n]], faulted[holds[1][n]]
		if c.choice != f.choice || c.due.Sub(c.first) != f.due.Sub(f.first) || c.nth != f.nth || c.nth != 1+n/12 {
			t.Errorf("plan %d: calm run %s %s after its ask (ask %d), faulted run %s %s after (ask %d)", n,
				c.choice, c.due.Sub(c.first), c.nth, f.choice, f.due.Sub(f.first), f.nth)
		}
	}
}

// TestQuestionReadsMalformedMessages: what is not an approval message (or not JSON) is no
// question; a question without a readable deadline has none.
func TestQuestionReadsMalformedMessages(t *testing.T) {
	for _, tc := range []struct {
		name, blocks, wantHold string
		wantDeadline           time.Time
	}{
		{"empty", "", "", time.Time{}},
		{"not JSON", "{[", "", time.Time{}},
		{"alert, no buttons", `[{"type":"section","text":{"type":"mrkdwn","text":"Reclaim handled"}}]`, "", time.Time{}},
		{"button without a value", `[{"type":"actions","elements":[{"action_id":"bursar_approve"}]}]`, "", time.Time{}},
		{"deadline unreadable", `[{"type":"actions","elements":[{"action_id":"bursar_approve","value":"h"}]},` +
			`{"type":"mrkdwn","text":"*Decide by*\n<!date^x|soon>"}]`, "h", time.Time{}},
		{"question", `[{"type":"mrkdwn","text":"*Decide by*\n<!date^1704070800^{time}|2024-01-01T01:00:00Z> (then rejected)"},` +
			`{"type":"actions","elements":[{"action_id":"bursar_approve","value":"h"}]}]`, "h", time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC)},
		{"after a restore", `[{"type":"mrkdwn","text":"*Decide by*\n<!date^1704070800^{time}|2024-01-01T01:00:00Z> (then kept)"},` +
			`{"type":"actions","elements":[{"action_id":"bursar_keep","value":"h"},{"action_id":"bursar_go_back","value":"h"}]}]`, "h",
			time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, ok := question(tc.blocks)
			if q.hold != tc.wantHold || ok != (tc.wantHold != "") || !q.deadline.Equal(tc.wantDeadline) ||
				q.restored != strings.Contains(tc.blocks, bslack.ActionGoBack) {
				t.Errorf("question = %+v, %v; want %q, %s", q, ok, tc.wantHold, tc.wantDeadline)
			}
		})
	}
}

// TestPlanOfReadsMalformedMessages: planOf reads the Plan section's lines without the replica
// counts and offers; a message without one (or not JSON) has no plan.
func TestPlanOfReadsMalformedMessages(t *testing.T) {
	for _, tc := range []struct{ name, blocks, want string }{
		{"empty", "", ""},
		{"not JSON", "{[", ""},
		{"no plan section", `[{"type":"section","text":{"type":"mrkdwn","text":"Reclaim handled"}}]`, ""},
		{"plan text not a string", `[{"type":"section","text":{"type":"mrkdwn","text":7}}]`, ""},
		{"plan", `[{"type":"section","text":{"type":"mrkdwn","text":"*Plan*\n• launch svc → 3 replicas (+1) on z1/spot at z1, hedge *(needs approval)*\n• drain svc → 0 replicas (-2) on z2/od at z2, cheaper_offer"}}]`,
			"• launch svc (+1) hedge *(needs approval)*\n• drain svc (-2) cheaper_offer"},
		{"plan line of another shape", `[{"type":"section","text":{"type":"mrkdwn","text":"*Plan*\n• launch svc on z1"}}]`, "• launch svc on z1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := planOf(tc.blocks); got != tc.want {
				t.Errorf("planOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzQuestion(f *testing.F) {
	f.Add(`[{"type":"actions","elements":[{"action_id":"bursar_approve","value":"h"}]}]`, "Plan for svc approved by U0")
	f.Add(`{"text":"Decide by <!date^1|2024-01-01T00:00:00Z"}`, "rejected by ")
	f.Fuzz(func(t *testing.T, blocks, text string) {
		q, ok := question(blocks)
		if p := planOf(blocks); p != "" && !json.Valid([]byte(blocks)) {
			t.Errorf("planOf(%q) = %q from a message that is not JSON", blocks, p)
		}
		if ok != (q.hold != "") {
			t.Errorf("question(%q) = %+v, %v", blocks, q, ok)
		}
		if outcomeOf(text) == "" {
			t.Errorf("outcomeOf(%q) is empty: an update would count as no decision", text)
		}
	})
}
