package arbiter_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// remedyPolicy only watches svc's spend, and wants a stuck on-demand fallback proposed back to spot.
const remedyPolicy = `name: svc-day
scope: workload=svc
period: day
limit: 1000
thresholds: [{at: 80%}]
approvers: [U0APPROVER]
approval_timeout: 10m
remedies: [fallback]
`

// stuckOnDemand runs svc's two replicas on on-demand (spot not priced), then prices spot again at
// a quarter of on-demand, with no pass after it: the fallback is stuck.
func stuckOnDemand(t *testing.T, br *budgetRig) string {
	t.Helper()
	ctx := context.Background()
	r := br.proc.r
	od := br.price("us-east-1a", events.OnDemand, 4)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(od, 4) })
	r.Pass(ctx)
	for range 2 {
		br.clock.Advance(time.Minute)
		br.settle(ctx, r)
	}
	if n := onDemandReady(br); n != 2 {
		t.Fatalf("%d on-demand replicas ready, want 2; calls %+v, replicas %+v", n, br.sim.Calls(), br.proc.r.Books()["svc"].Replicas)
	}
	spot := br.price("us-east-1b", events.Spot, 1)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(spot, 1) })
	return spot
}

func onDemandReady(br *budgetRig) int {
	n := 0
	for _, rep := range br.proc.r.Books()["svc"].Replicas {
		if rep.Market == events.OnDemand && rep.State == "ready" {
			n++
		}
	}
	return n
}

func remedyOf(t *testing.T, policy string) arbiter.RemedyRequest {
	t.Helper()
	ps, err := budget.ParseFile("policy.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	return arbiter.RemedyRequest{Anomaly: "a1", Workload: "svc", Policy: ps[0], Remedy: budget.RemedyFallback, Expected: 2, Observed: 8}
}

// remedyAsWatcher calls Remedy as the anomaly watcher does: with a deadline, and a context that
// ends when the call returns.
func remedyAsWatcher(ctx context.Context, r *running, req arbiter.RemedyRequest) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return r.Remedy(ctx, req)
}

// spotLaunches counts the actuator's launches on spot.
func spotLaunches(br *budgetRig) int {
	n := 0
	for _, c := range br.sim.Calls() {
		if c.Kind == "launch" && c.Market == events.Spot {
			n++
		}
	}
	return n
}

func TestRemedyAsksOnceAndApprovedMovesBackToSpot(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, remedyPolicy)
	spot := stuckOnDemand(t, br)
	req := remedyOf(t, remedyPolicy)
	hold, err := remedyAsWatcher(ctx, br.proc.r, req)
	if err != nil || hold == "" {
		t.Fatalf("remedy: hold %q, err %v; want one asked", hold, err)
	}
	if got := br.asked(t, 1); got[0] != hold {
		t.Fatalf("asked %v, want %s", got, hold)
	}
	// The same anomaly, and another one while this remedy is open, ask nothing more.
	for _, a := range []string{"a1", "a2"} {
		again := req
		again.Anomaly = a
		if h, err := remedyAsWatcher(ctx, br.proc.r, again); err != nil || h != "" {
			t.Fatalf("anomaly %s asked again: hold %q, err %v", a, h, err)
		}
	}
	if n := br.posts(); n != 1 || spotLaunches(br) != 0 {
		t.Fatalf("before the answer: %d messages, %d spot launches; want 1 and none", n, spotLaunches(br))
	}
	msg := br.slack.Messages()[0].Text
	if !strings.Contains(msg, "svc") {
		t.Errorf("the question %q does not name the workload", msg)
	}
	if code := br.click(t, approver, slack.ActionApprove, hold); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	eventually(t, "the approved move reaches the actuator", func() bool { return spotLaunches(br) == 1 })
	for _, c := range br.sim.Calls() {
		if c.Kind == "launch" && c.Market == events.Spot && c.Offer != spot {
			t.Errorf("launched on %s, want the spot offer %s", c.Offer, spot)
		}
	}
	for range 3 {
		br.clock.Advance(time.Minute)
		br.settle(ctx, br.proc.r)
	}
	if n := onDemandReady(br); n != 0 {
		t.Errorf("%d on-demand replicas left once spot is ready, want none", n)
	}
	br.onlyOnce(t)
	if spotLaunches(br) != 1 {
		t.Errorf("%d spot launches, want the move once", spotLaunches(br))
	}
}

func TestRemedyRejectedMovesNothingAndIsNotAskedAgain(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, remedyPolicy)
	stuckOnDemand(t, br)
	req := remedyOf(t, remedyPolicy)
	hold, err := remedyAsWatcher(ctx, br.proc.r, req)
	if err != nil || hold == "" {
		t.Fatalf("remedy: hold %q, err %v; want one asked", hold, err)
	}
	br.asked(t, 1)
	if code := br.click(t, approver, slack.ActionReject, hold); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	eventually(t, "the rejected remedy leaves the books", func() bool { return len(br.awaiting("svc", hold)) == 0 })
	if h, err := remedyAsWatcher(ctx, br.proc.r, req); err != nil || h != "" {
		t.Fatalf("the same anomaly asked again after a rejection: hold %q, err %v", h, err)
	}
	if spotLaunches(br) != 0 || onDemandReady(br) != 2 || br.posts() != 1 {
		t.Errorf("after the rejection: %d spot launches, %d on-demand ready, %d messages; want 0, 2, 1",
			spotLaunches(br), onDemandReady(br), br.posts())
	}
}

func TestRemedyIsDurableAcrossARestart(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, remedyPolicy)
	stuckOnDemand(t, br)
	req := remedyOf(t, remedyPolicy)
	hold, err := remedyAsWatcher(ctx, br.proc.r, req)
	if err != nil || hold == "" {
		t.Fatalf("remedy: hold %q, err %v", hold, err)
	}
	br.asked(t, 1)
	br.proc.kill()
	br.proc = br.startProc(t, "a2")
	if got := br.asked(t, 1); got[0] != hold {
		t.Fatalf("the new leader asks %v, want the same hold %s", got, hold)
	}
	if h, err := remedyAsWatcher(ctx, br.proc.r, req); err != nil || h != "" {
		t.Fatalf("the new leader asked the same anomaly twice: hold %q, err %v", h, err)
	}
	if n := br.posts(); n != 1 {
		t.Errorf("%d approval messages across the restart, want 1 (the same one resumed)", n)
	}
}

func TestRemedyTimedOutMovesNothing(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, remedyPolicy)
	stuckOnDemand(t, br)
	req := remedyOf(t, remedyPolicy)
	hold, err := remedyAsWatcher(ctx, br.proc.r, req)
	if err != nil || hold == "" {
		t.Fatalf("remedy: hold %q, err %v", hold, err)
	}
	br.asked(t, 1)
	br.clock.Advance(11 * time.Minute) // past the policy's approval_timeout of 10m
	br.proc.approvals.Sweep(ctx)
	eventually(t, "the timed-out remedy leaves the books", func() bool { return len(br.awaiting("svc", hold)) == 0 })
	if got, want := br.updates(), []string{"Plan for svc rejected by timeout"}; !slices.Equal(got, want) {
		t.Errorf("slack message updates %q, want %q", got, want)
	}
	br.settle(ctx, br.proc.r)
	if h, err := remedyAsWatcher(ctx, br.proc.r, req); err != nil || h != "" {
		t.Fatalf("the same anomaly asked again after a timeout: hold %q, err %v", h, err)
	}
	if spotLaunches(br) != 0 || br.posts() != 1 {
		t.Errorf("after the timeout: %d spot launches, %d messages; want none and 1", spotLaunches(br), br.posts())
	}
}

// TestRemedyNeedsSpotPricedAndCheaper: with no spot offer priced, or spot dearer than on-demand,
// nothing is asked.
func TestRemedyNeedsSpotPricedAndCheaper(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, remedyPolicy)
	r := br.proc.r
	od := br.price("us-east-1a", events.OnDemand, 4)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(od, 4) })
	r.Pass(ctx)
	for range 2 {
		br.clock.Advance(time.Minute)
		br.settle(ctx, r)
	}
	req := remedyOf(t, remedyPolicy)
	if h, err := remedyAsWatcher(ctx, r, req); err != nil || h != "" {
		t.Fatalf("no spot priced, yet asked: hold %q, err %v", h, err)
	}
	dear := br.price("us-east-1b", events.Spot, 5)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(dear, 5) })
	if h, err := remedyAsWatcher(ctx, r, req); err != nil || h != "" {
		t.Fatalf("spot dearer than on-demand, yet asked: hold %q, err %v", h, err)
	}
	if br.posts() != 0 {
		t.Errorf("%d approval messages, want none", br.posts())
	}
}
