package arbiter_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// restoreFleet is fleetYAML's svc at one replica at least and as many as its tokens ask, 100
// tokens/s each.
var restoreFleet = strings.Replace(fleetYAML, "replicas: {min: 2, max: 2}",
	"replicas: {min: 1, max: 3}\n    scaling: {metric: tokens_per_second, per_replica: 100}", 1)

// restorePolicy holds any pass adding over 0.5 USD/h to svc for the approver; it says nothing of
// restores, so it restores first.
var restorePolicy = strings.Replace(svcPolicy, "approve_over: 1/h", "approve_over: 0.5/h", 1)

// serving brings svc to two ready spot replicas, as its tokens ask: the prices (spot in zones a
// and b, on-demand in a), the plan held and approved, the launches ready.
func (br *budgetRig) serving(t *testing.T) *running {
	t.Helper()
	ctx := context.Background()
	r := br.proc.r
	ids := []string{br.price("us-east-1a", events.Spot, 1.0), br.price("us-east-1b", events.Spot, 1.1),
		br.price("us-east-1a", events.OnDemand, 3.0)}
	br.tokens(t, 200)
	eventually(t, "the prices and the demand are folded", func() bool {
		return r.KnowsPrice(ids[0], 1.0) && r.KnowsPrice(ids[1], 1.1) && r.KnowsPrice(ids[2], 3.0) && r.Demand("svc") == 2
	})
	r.Pass(ctx)
	br.approveLaunches(t)
	for range 2 {
		br.clock.Advance(31 * time.Second)
		br.settle(ctx, r)
	}
	if n := ready(br.harness); n != 2 || len(br.proc.approvals.Pending()) != 0 {
		t.Fatalf("%d replicas ready, approvals pending %v; want 2 ready and none pending", n, br.proc.approvals.Pending())
	}
	return r
}

// tokens publishes two samples of one replica's counters, 15 s apart and ending now, rising tps
// tokens a second. Call it once: the demand stays current for five minutes of the clock.
func (h *harness) tokens(t *testing.T, tps int64) {
	t.Helper()
	now := h.clock.Now()
	for i, at := range []time.Time{now.Add(-15 * time.Second), now} {
		e := &events.TokensSample{Meta: events.Meta{At: at}, Location: "a", Workload: "svc", Replica: "r1", Server: "vllm",
			GenerationTokens: int64(i) * 15 * tps, Requests: int64(i)}
		if err := h.pub.Publish(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// restored waits, after a loss, until a launch the approvers were not asked about reaches the
// actuator and they are asked after it: one question pending, Keep and Go back, asking about
// go-backs waiting in the books. It returns the question's hold and the launches made since
// approveLaunches has the approver approve svc's one question and waits until every launch it
// held reached the actuator and nothing is in flight: the locations run theirs side by side, so
// one may be applied while another is not yet under way.
func (br *budgetRig) approveLaunches(t *testing.T) {
	t.Helper()
	r := br.proc.r
	held := br.asked(t, 1)[0]
	approved := 0
	for _, h := range r.Books()["svc"].Holds {
		if h.ID != held {
			continue
		}
		for _, a := range h.Plan.Actions {
			if a.Kind == "launch" {
				approved++
			}
		}
	}
	if code := br.click(t, approver, slack.ActionApprove, held); code != http.StatusOK {
		t.Fatalf("approver's click: HTTP %d", code)
	}
	eventually(t, "the approved launches are applied", func() bool {
		launches := 0
		for _, c := range br.sim.Calls() {
			if c.Kind == "launch" {
				launches++
			}
		}
		return approved > 0 && launches >= approved && r.InFlight() == 0
	})
}

// callsBefore.
func (br *budgetRig) restored(t *testing.T, callsBefore int) (arbiter.Hold, []actuate.Target) {
	t.Helper()
	eventually(t, "a replacement reaches the actuator", func() bool {
		return slices.ContainsFunc(br.sim.Calls()[callsBefore:], func(c actuate.Target) bool { return c.Kind == "launch" })
	})
	id := br.asked(t, 1)[0]
	var h arbiter.Hold
	for _, hh := range br.proc.r.Books()["svc"].Holds {
		if hh.ID == id {
			h = hh
		}
	}
	if !h.Restored || len(br.awaiting("svc", id)) != len(h.Actions) {
		t.Fatalf("the question %s is not asked after a restore: %+v", id, h)
	}
	for _, a := range h.Plan.Actions {
		if a.NeedsApproval && a.Reason != arbiter.ReasonGoBack {
			t.Errorf("the question after the restore asks about %+v, want only go-backs", a)
		}
	}
	post := br.slack.Messages()[len(br.slack.Messages())-1]
	if post.Method != "chat.postMessage" || !strings.Contains(string(post.Blocks), slack.ActionGoBack) ||
		!strings.Contains(string(post.Blocks), slack.ActionKeep) || !strings.HasPrefix(post.Text, "Restored at once: svc") {
		t.Errorf("the message after the restore is %s %q %s, want Keep and Go back", post.Method, post.Text, post.Blocks)
	}
	var launched []actuate.Target
	for _, c := range br.sim.Calls()[callsBefore:] {
		if c.Kind == "launch" {
			launched = append(launched, c)
		}
	}
	return h, launched
}

// TestReclaimIsRestoredAtOnceAndTheApproversToldAfter: under approve_over 0.5/h, a reclaim's
// replacement (a spot replica lost at once, as the replay's market loses them) is applied at once,
// with no question before it; the approvers are asked after, with the spend it added. Keep keeps
// it; Go back drains what it launched down to the workload's minimum, and the launch the planner
// then wants is asked about before it is made. Each decision is audited as the go-back's
// action.updated, by the approver.
func TestReclaimIsRestoredAtOnceAndTheApproversToldAfter(t *testing.T) {
	tests := []struct {
		name, button string
		wantStatus   events.ActionStatus
		wantReady    int
		wantUpdate   string
	}{
		{"keep", slack.ActionKeep, events.ActionRejected, 2, "Restore for svc kept by " + approver},
		{"go back", slack.ActionGoBack, events.ActionApproved, 1, "Restore for svc gone back on by " + approver},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			br := newBudgetRig(t, restoreFleet, restorePolicy)
			r := br.serving(t)
			steps := br.watchActions(t, 64, func(e *events.ActionUpdated) bool { return e.Reason == arbiter.ReasonGoBack })
			notice, ok := br.sim.Reclaim("a", 0)
			if !ok {
				t.Fatal("no spot replica to reclaim in zone a")
			}
			before := len(br.sim.Calls())
			if err := br.pub.Publish(ctx, notice); err != nil {
				t.Fatal(err)
			}
			h, launched := br.restored(t, before)
			if h.Plan.USDPerHourNow <= h.Plan.USDPerHourWas+0.5 {
				t.Errorf("the question shows %.2f → %.2f USD/h, want what the restore added, over the 0.5/h line",
					h.Plan.USDPerHourWas, h.Plan.USDPerHourNow)
			}

			if code := br.click(t, approver, tt.button, h.ID); code != http.StatusOK {
				t.Fatalf("approver's click: HTTP %d", code)
			}
			eventually(t, "the question is decided", func() bool { return len(br.proc.approvals.Pending()) == 0 })
			for range 3 {
				br.clock.Advance(31 * time.Second)
				br.settle(ctx, r)
			}
			if n := ready(br.harness); n != tt.wantReady {
				t.Errorf("%d replicas ready after %s, want %d", n, tt.name, tt.wantReady)
			}
			calls := br.callsByID()
			for _, c := range launched {
				if calls[c.ActionID] != 1 {
					t.Errorf("restore %s reached the actuator %d times, want once", c.ActionID, calls[c.ActionID])
				}
			}
			backs := 0
			for _, id := range h.Actions {
				backs += calls[id]
			}
			if wantBacks := map[bool]int{true: 1, false: 0}[tt.button == slack.ActionGoBack]; min(backs, 1) != wantBacks {
				t.Errorf("go-backs reached the actuator %d times after %s", backs, tt.name)
			}
			if got := br.updates(); got[len(got)-1] != tt.wantUpdate {
				t.Errorf("slack message updates %q, want the last %q", got, tt.wantUpdate)
			}
			eventually(t, "the decision is audited", func() bool {
				for {
					select {
					case e := <-steps:
						if e.Status == tt.wantStatus && e.Actor == approver && slices.Contains(h.Actions, e.ActionID) {
							return true
						}
					default:
						return false
					}
				}
			})
			if tt.button == slack.ActionGoBack { // the workload asks for two again: what it launches for that is asked about first
				back := slices.IndexFunc(br.sim.Calls(), func(c actuate.Target) bool { return slices.Contains(h.Actions, c.ActionID) })
				if i := slices.IndexFunc(br.sim.Calls()[back+1:], func(c actuate.Target) bool { return c.Kind == "launch" }); i >= 0 {
					t.Errorf("launched %+v after going back, unasked", br.sim.Calls()[back+1+i])
				}
				b := br.proc.r.Books()["svc"]
				if len(b.Holds) == 0 || slices.ContainsFunc(b.Holds, func(h arbiter.Hold) bool { return h.Restored }) {
					t.Errorf("after going back, holds %+v; want the planner's launches held for approval", b.Holds)
				}
			}
			br.onlyOnce(t)
		})
	}
}

// lossOf makes svc, serving two replicas, lose one (or want one more) as named, and returns how
// many actuator calls there were before.
func (br *budgetRig) lossOf(t *testing.T, kind string) int {
	t.Helper()
	ctx := context.Background()
	r, before := br.proc.r, len(br.sim.Calls())
	switch kind {
	case "reclaim": // lost at once, as the replay's market loses spot
		notice, ok := br.sim.Reclaim("a", 0)
		if !ok {
			t.Fatal("no spot replica to reclaim in zone a")
		}
		if err := br.pub.Publish(ctx, notice); err != nil {
			t.Fatal(err)
		}
	case "vanish": // gone from the actuator's report, no notice: a Deployment scaled down by hand
		if err := br.sim.Scale(ctx, actuate.Target{Group: actuate.Group{Workload: "svc", Location: "b", Market: events.Spot},
			Kind: "drain"}); err != nil {
			t.Fatal(err)
		}
		r.Report(ctx)
		r.Pass(ctx)
	case "demand": // a third replica's worth of tokens
		br.tokens(t, 300)
		eventually(t, "the demand is folded", func() bool { return r.Demand("svc") == 3 })
		r.Pass(ctx)
	}
	return before
}

// TestLossesAreRestoredAtOnceAndRisesStillAsked: under approve_over 0.5/h, replacing a replica
// reclaimed or gone from its actuator's report is applied at once and told of after; a policy
// saying restore: ask holds the reclaim's replacement as before, and a rise in demand is held as
// before, also right after a restore.
func TestLossesAreRestoredAtOnceAndRisesStillAsked(t *testing.T) {
	tests := []struct {
		name, policy string
		losses       []string
		wantRestored bool
	}{
		{"a vanished replica is replaced at once", restorePolicy, []string{"vanish"}, true},
		{"restore: ask holds a reclaim's replacement", restorePolicy + "restore: ask\n", []string{"reclaim"}, false},
		{"a rise in demand is held", restorePolicy, []string{"demand"}, false},
		{"a rise in demand right after a restore is held", restorePolicy, []string{"reclaim", "demand"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			br := newBudgetRig(t, restoreFleet, tt.policy)
			r := br.serving(t)
			var before int
			for i, kind := range tt.losses {
				if i > 0 { // the restore before it: kept, and ready
					if code := br.click(t, approver, slack.ActionKeep, br.asked(t, 1)[0]); code != http.StatusOK {
						t.Fatalf("approver's click: HTTP %d", code)
					}
					eventually(t, "the question is decided", func() bool { return len(br.proc.approvals.Pending()) == 0 })
					br.clock.Advance(31 * time.Second)
					br.settle(ctx, r)
				}
				before = br.lossOf(t, kind)
			}
			if tt.wantRestored {
				br.restored(t, before)
				return
			}
			r.Pass(ctx)
			id := br.asked(t, 1)[0]
			posts := br.posts()
			r.Pass(ctx) // proposed again: not asked again
			b := r.Books()["svc"]
			if len(b.Holds) != 1 || b.Holds[0].Restored || len(br.awaiting("svc", id)) == 0 || br.posts() != posts {
				t.Errorf("holds %+v, %d questions posted after another pass (%d before); want the launches held, asked once",
					b.Holds, br.posts(), posts)
			}
			if i := slices.IndexFunc(br.sim.Calls()[before:], func(c actuate.Target) bool { return c.Kind == "launch" }); i >= 0 {
				t.Errorf("launched %+v unasked", br.sim.Calls()[before+i])
			}
		})
	}
}

// spotFleet is restoreFleet on spot alone: no on-demand stands in for a launch that fails.
var spotFleet = strings.Replace(restoreFleet, "markets: [spot, on_demand]", "markets: [spot]", 1)

// TestAFailedLaunchIsRetriedAtOnce: a launch approved under approve_over 0.5/h finds no capacity
// and is given up; its retry elsewhere restores it, at once, and the approvers are told after.
func TestAFailedLaunchIsRetriedAtOnce(t *testing.T) {
	ctx := context.Background()
	br := newBudgetRig(t, spotFleet, restorePolicy)
	br.sim.SetCapacity("a", 0)
	r := br.proc.r
	ids := []string{br.price("us-east-1a", events.Spot, 1.0), br.price("us-east-1b", events.Spot, 1.1)}
	br.tokens(t, 200)
	eventually(t, "the prices and the demand are folded", func() bool {
		return r.KnowsPrice(ids[0], 1.0) && r.KnowsPrice(ids[1], 1.1) && r.Demand("svc") == 2
	})
	r.Pass(ctx)
	br.approveLaunches(t)
	if !slices.ContainsFunc(br.sim.Calls(), func(c actuate.Target) bool { return c.Location == "a" && c.Kind == "launch" }) {
		t.Fatal("nothing was launched into zone a, which has no capacity: the test shows nothing")
	}
	before := len(br.sim.Calls())
	br.clock.Advance(31 * time.Second)
	br.settle(ctx, r) // zone a reports its launch pending for capacity: given up, and retried
	// The retry is applied at once, unasked, and goes to zone b. Where the quick answer to the
	// pending report runs before the pass, it may first try zone a once more (seen 1 run in 10;
	// that zone is then given up again), so the test asks for a launch into b, not for b first.
	_, launched := br.restored(t, before)
	if !slices.ContainsFunc(launched, func(c actuate.Target) bool { return c.Location == "b" }) {
		t.Errorf("the retry launched %+v, want one into zone b", launched)
	}
	br.clock.Advance(31 * time.Second)
	br.settle(ctx, r)
	if n := ready(br.harness); n != 2 {
		t.Errorf("%d replicas ready after the retry, want 2", n)
	}
}

// TestAHeldRiseDoesNotKeepARestoreBack: launches for a rise in demand wait for the approver; a
// reclaim meanwhile is restored at once although its replacement looks like a launch that waits
// (an on-demand fallback), and the rise still waits.
func TestAHeldRiseDoesNotKeepARestoreBack(t *testing.T) {
	br := newBudgetRig(t, restoreFleet, restorePolicy)
	br.serving(t)
	br.lossOf(t, "demand")
	rise := br.asked(t, 1)[0]
	before := br.lossOf(t, "reclaim")
	eventually(t, "a replacement reaches the actuator", func() bool {
		return slices.ContainsFunc(br.sim.Calls()[before:], func(c actuate.Target) bool { return c.Kind == "launch" })
	})
	eventually(t, "the approvers are asked after the restore", func() bool {
		return slices.ContainsFunc(br.proc.r.Books()["svc"].Holds, func(h arbiter.Hold) bool { return h.Restored })
	})
	if len(br.awaiting("svc", rise)) == 0 {
		t.Errorf("the rise %s no longer waits", rise)
	}
}
