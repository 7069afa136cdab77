package arbiter_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// TestHeldPlanSurvivesARestart: a plan held for approval is kept in the placement bucket with its
// question; a crashed arbiter's successor resumes the same Slack message with the first deadline,
// and an approval through it applies each action once.
func TestHeldPlanSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, svcPolicy)
	hold, held := br.firstPlan(t)
	eventually(t, "the message is recorded with the hold", func() bool {
		b := br.proc.r.Books()["svc"]
		return b != nil && len(b.Holds) == 1 && b.Holds[0].TS != ""
	})
	br.proc.kill()
	books, err := arbiter.LoadBooks(ctx, br.env.JS, bus.BucketPlacement)
	if err != nil {
		t.Fatal(err)
	}
	if hs := books["svc"].Holds; len(hs) != 1 || hs[0].ID != hold || !hs[0].Deadline.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("stored holds %+v, want %s due at the first ask's deadline", hs, hold)
	}

	br.clock.Advance(4 * time.Minute)
	br.proc = br.startProc(t, "a2") // another arbiter takes the lead once the lease lapses
	if got := br.asked(t, 1); got[0] != hold {
		t.Fatalf("pending after the restart %v, want %s", got, hold)
	}
	if n := br.posts(); n != 1 {
		t.Errorf("%d approval messages after the restart, want the first one resumed", n)
	}
	if code := br.click(t, approver, slack.ActionApprove, hold); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	eventually(t, "both approved launches reach the actuator", func() bool {
		c := br.callsByID()
		return c[held[0]] == 1 && c[held[1]] == 1
	})
	br.proc.r.Pass(ctx)
	eventually(t, "nothing is in flight", func() bool { return br.proc.r.InFlight() == 0 })
	br.onlyOnce(t)
	if m := br.slack.Messages(); m[len(m)-1].Method != "chat.update" || m[len(m)-1].TS != m[0].TS {
		t.Errorf("the outcome did not update the first message: %+v", m[len(m)-1])
	}
}

// TestRestartKeepsTheFirstDeadline: the timeout of a resumed question counts from the first ask.
func TestRestartKeepsTheFirstDeadline(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, fleetYAML, svcPolicy)
	hold, _ := br.firstPlan(t)
	br.proc.kill()
	br.clock.Advance(6 * time.Minute)
	br.proc = br.startProc(t, "a1")
	br.asked(t, 1)
	br.clock.Advance(4 * time.Minute) // 10 minutes after the first ask, 4 after the restart
	br.proc.approvals.Sweep(ctx)
	eventually(t, "the plan is rejected at the first deadline", func() bool { return len(br.awaiting("svc", hold)) == 0 })
	if got, want := br.updates(), []string{"Plan for svc rejected by timeout"}; !slices.Equal(got, want) {
		t.Errorf("slack message updates %q, want %q", got, want)
	}
}

// floorPolicy cuts svc to its floor once it has spent 2 USD in a day; svc's floor is its minimum
// of two, so the cap of zero can only be met below the minimum, which needs an approval.
const floorPolicy = `name: svc-floor
scope: workload=svc
period: day
limit: 10
currency: USD
thresholds:
  - {at: 20%, action: scale-to-floor}
approvers: [U0APPROVER]
approval_timeout: 10m
`

// TestCutBelowMinimumWaitsForAnApprover: a budget's cut below a workload's minimum is held and
// asked in Slack; an approver's click drains the replicas, a rejection drops the cut and it is
// not asked again while the rejection stands.
func TestCutBelowMinimumWaitsForAnApprover(t *testing.T) {
	for _, button := range []string{slack.ActionApprove, slack.ActionReject} {
		t.Run(button, func(t *testing.T) {
			ctx := context.Background()
			br := newBudgetRig(t, fleetYAML, floorPolicy)
			r := br.proc.r
			ids := []string{br.price("us-east-1a", events.Spot, 1.0), br.price("us-east-1b", events.Spot, 1.1)}
			eventually(t, "the prices are folded", func() bool { return r.KnowsPrice(ids[0], 1.0) && r.KnowsPrice(ids[1], 1.1) })
			br.settle(ctx, r)
			br.clock.Advance(31 * time.Second)
			br.settle(ctx, r)
			if n := ready(br.harness); n != 2 || br.posts() != 0 {
				t.Fatalf("%d replicas ready and %d messages under the threshold, want 2 and none", n, br.posts())
			}
			launches := len(br.sim.Calls())

			br.clock.Advance(time.Hour) // 2.10 USD spent: the cap is zero
			r.Report(ctx)
			eventually(t, "the cut is asked for", func() bool { r.Pass(ctx); return len(br.proc.approvals.Pending()) == 1 })
			hold := br.asked(t, 1)[0]
			cut := br.awaiting("svc", hold)
			if len(cut) != 1 || len(br.sim.Calls()) != launches {
				t.Fatalf("held %v with %d new actuator calls, want one cut and none", cut, len(br.sim.Calls())-launches)
			}
			if code := br.click(t, approver, button, hold); code != http.StatusOK {
				t.Fatalf("approver's click: HTTP %d", code)
			}
			if button == slack.ActionReject {
				eventually(t, "the cut leaves the books", func() bool { return len(br.awaiting("svc", hold)) == 0 })
				r.Pass(ctx)
				if n := br.posts(); n != 1 || len(br.sim.Calls()) != launches || ready(br.harness) != 2 {
					t.Errorf("after the rejection: %d messages, %d calls, %d ready; want 1, %d, 2",
						n, len(br.sim.Calls()), ready(br.harness), launches)
				}
				return
			}
			eventually(t, "the cut is applied", func() bool { return br.callsByID()[cut[0]] == 1 && r.InFlight() == 0 })
			br.settle(ctx, r)
			if n := ready(br.harness); n != 0 {
				t.Errorf("%d replicas ready after the approved cut to 0, want 0", n)
			}
			r.Pass(ctx) // the launches back to the minimum are blocked; nothing is left to cut
			if n := br.posts(); n != 1 {
				t.Errorf("%d approval messages after the cut, want 1", n)
			}
			br.onlyOnce(t)
		})
	}
}
