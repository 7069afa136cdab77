package budget

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// gatePolicy: 100 USD a day on workload llm; forecast 100% asks approval over 5/h, actual 100%
// blocks scale-up, actual 120% scales to the floor.
func gatePolicy() Policy {
	p := Policy{Name: "llm-daily", Scope: Scope{Workload: "llm"}, Period: Day, Limit: 100, Currency: "USD",
		Thresholds: []Threshold{{At: Level{80, true}}, {At: Level{100, true}, On: Forecast, Action: RequireApproval},
			{At: Level{100, true}, Action: BlockScaleUp}, {At: Level{120, true}, Action: ScaleToFloor}},
		ApproveOver: 5, Approvers: []string{"U1AAA"}, ApprovalTimeout: Duration(20 * time.Minute)}
	p.Normalize()
	return p
}

// gateAt returns a gate whose llm spend at noon burns perHour since midnight: actual is 12×,
// forecast 24× the rate.
func gateAt(perHour float64, ps ...Policy) (*Gate, time.Time) {
	g := NewGate()
	g.SetPolicies(ps)
	now := t0.Add(12 * time.Hour)
	g.Evaluate(now, []Interval{{Workload: "llm", Provider: "gcp", Location: "gcp-usc1", USDPerHour: perHour, From: t0}})
	return g, now
}

func launch(id string, reason placement.Reason, perHour float64) Change {
	return Change{ActionID: id, Kind: placement.ActionLaunch, Reason: reason, Provider: "gcp",
		Location: "gcp-usc1", USDPerHour: perHour}
}

func TestReview(t *testing.T) {
	below := Change{ActionID: "cut", Kind: placement.ActionScale, Reason: placement.ReasonBudget, USDPerHour: -8, BelowMinimum: true}
	noRule := gatePolicy()
	noRule.Thresholds = noRule.Thresholds[:1] // notify at 80% only: approve_over then always holds
	tests := []struct {
		name          string
		perHour       float64
		policies      []Policy
		plan          Plan
		wantOutcome   Outcome
		wantBlocked   []string
		wantApprove   []string
		wantApprovers []string
		wantTimeout   time.Duration
	}{
		{"under every line", 3, nil, Plan{Workload: "llm", Changes: []Change{launch("a", placement.ReasonDemandUp, 8)}},
			Allow, nil, nil, nil, 0},
		{"forecast over, small rise", 4.5, nil, Plan{Workload: "llm", Changes: []Change{launch("a", placement.ReasonDemandUp, 4)}},
			Allow, nil, nil, nil, 0},
		{"forecast over, rise over 5/h", 4.5, nil, Plan{Workload: "llm", Changes: []Change{
			launch("a", placement.ReasonDemandUp, 4), launch("b", placement.ReasonHedge, 4),
			{ActionID: "d", Kind: placement.ActionDrain, Location: "gcp-usc1", Provider: "gcp", USDPerHour: -1}}},
			NeedsApproval, nil, []string{"a", "b"}, []string{"U1AAA"}, 20 * time.Minute},
		{"actual over: scale-up blocked", 9, nil, Plan{Workload: "llm", Changes: []Change{launch("a", placement.ReasonDemandUp, 4)}},
			Blocked, []string{"a"}, nil, nil, 0},
		{"actual over: a reclaim replacement goes through", 9, nil, Plan{Workload: "llm", Changes: []Change{launch("r", placement.ReasonReclaim, 4)}},
			Allow, nil, nil, nil, 0},
		{"floor reached: growth blocked too", 10.5, nil, Plan{Workload: "llm", Changes: []Change{launch("a", placement.ReasonDemandUp, 1)}},
			Blocked, []string{"a"}, nil, nil, 0},
		{"below minimum always asks", 3, nil, Plan{Workload: "llm", Changes: []Change{below}},
			NeedsApproval, nil, []string{"cut"}, []string{"U1AAA"}, 20 * time.Minute},
		{"other workload", 10.5, nil, Plan{Workload: "search", Changes: []Change{launch("a", placement.ReasonDemandUp, 50)}},
			Allow, nil, nil, nil, 0},
		{"below minimum with no policy in scope", 3, nil, Plan{Workload: "search", Changes: []Change{below}},
			NeedsApproval, nil, []string{"cut"}, nil, DefaultApprovalTimeout},
		{"approve_over without a require-approval threshold always holds", 1, []Policy{noRule},
			Plan{Workload: "llm", Changes: []Change{launch("a", placement.ReasonDemandUp, 6)}},
			NeedsApproval, nil, []string{"a"}, []string{"U1AAA"}, 20 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := tt.policies
			if ps == nil {
				ps = []Policy{gatePolicy()}
			}
			g, now := gateAt(tt.perHour, ps...)
			v := g.Review(context.Background(), []Plan{tt.plan}, now)
			if v.Outcome != tt.wantOutcome || !reflect.DeepEqual(v.Blocked, tt.wantBlocked) ||
				!reflect.DeepEqual(v.Approve, tt.wantApprove) || !reflect.DeepEqual(v.Approvers, tt.wantApprovers) ||
				v.Timeout != tt.wantTimeout {
				t.Errorf("Review = %+v\nwant %s blocked %v approve %v approvers %v timeout %v",
					v, tt.wantOutcome, tt.wantBlocked, tt.wantApprove, tt.wantApprovers, tt.wantTimeout)
			}
			if tt.wantOutcome != Allow && len(v.Reasons) == 0 {
				t.Error("a held plan carries no reason")
			}
		})
	}
}

// TestReviewJudgesTheNetChange: approve_over applies to what a pass adds in scope net of what it
// saves (a move's launch with the replica it replaces; a team's workloads together), and the
// actions of one approval are held as one.
func TestReviewJudgesTheNetChange(t *testing.T) {
	team := gatePolicy()
	team.Name, team.Scope = "search-daily", Scope{Team: "search"}
	team.Thresholds = team.Thresholds[:1] // approve_over always holds
	llm := team
	llm.Name, llm.Scope = "llm-daily", Scope{Workload: "llm"}
	moveLaunch := launch("mv", placement.ReasonCheaperOffer, 10)
	replaced := Change{ActionID: "mv", Kind: placement.ActionDrain, Reason: placement.ReasonCheaperOffer,
		Provider: "gcp", Location: "gcp-usc1", USDPerHour: -9}
	moveDrain := Change{ActionID: "dr", Kind: placement.ActionDrain, Reason: placement.ReasonCheaperOffer,
		Provider: "gcp", Location: "gcp-usc1", USDPerHour: -9}
	tests := []struct {
		name      string
		policies  []Policy
		plans     []Plan
		wantHolds [][]string
	}{
		{"a move rising 1/h net goes through", []Policy{llm},
			[]Plan{{Workload: "llm", Team: "search", Changes: []Change{moveLaunch, replaced}}}, nil},
		{"the same launch without the replaced replica is held", []Policy{llm},
			[]Plan{{Workload: "llm", Team: "search", Changes: []Change{moveLaunch}}}, [][]string{{"mv"}}},
		{"a held move holds its drain too", []Policy{llm},
			[]Plan{{Workload: "llm", Team: "search", Changes: []Change{launch("up", placement.ReasonDemandUp, 8), moveLaunch, moveDrain}}},
			[][]string{{"up", "mv", "dr"}}},
		{"a team's workloads add up to one approval", []Policy{team},
			[]Plan{{Workload: "llm", Team: "search", Changes: []Change{launch("a", placement.ReasonDemandUp, 4)}},
				{Workload: "emb", Team: "search", Changes: []Change{launch("b", placement.ReasonDemandUp, 4)}}},
			[][]string{{"a", "b"}}},
		{"each workload alone stays under its own policy", []Policy{llm},
			[]Plan{{Workload: "llm", Team: "search", Changes: []Change{launch("a", placement.ReasonDemandUp, 4)}},
				{Workload: "emb", Team: "search", Changes: []Change{launch("b", placement.ReasonDemandUp, 4)}}}, nil},
		{"overlapping policies merge into one hold", []Policy{team, llm},
			[]Plan{{Workload: "llm", Team: "search", Changes: []Change{launch("a", placement.ReasonDemandUp, 6)}},
				{Workload: "emb", Team: "search", Changes: []Change{launch("b", placement.ReasonDemandUp, 1)}}},
			[][]string{{"a", "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, now := gateAt(1, tt.policies...)
			v := g.Review(context.Background(), tt.plans, now)
			var got [][]string
			for _, h := range v.Holds {
				got = append(got, h.Actions)
				if len(h.Reasons) == 0 || len(h.Approvers) == 0 || h.Timeout != 20*time.Minute {
					t.Errorf("hold %+v lacks its reasons, approvers or timeout", h)
				}
			}
			if !reflect.DeepEqual(got, tt.wantHolds) {
				t.Errorf("holds = %v, want %v", got, tt.wantHolds)
			}
		})
	}
}

func TestCaps(t *testing.T) {
	scope := placement.Scope{Workload: "llm"}
	tests := []struct {
		name    string
		perHour float64
		later   time.Duration
		want    []placement.Budget
	}{
		{"under the lines", 3, 0, nil},
		{"forecast only: approvals, no cap", 4.5, 0, nil},
		{"block scale-up holds spend at the burn rate", 9, 0, []placement.Budget{{Name: "llm-daily", Scope: scope, MaxPerHour: 9}}},
		{"scale to floor caps at zero", 10.5, 0, []placement.Budget{{Name: "llm-daily", Scope: scope, MaxPerHour: 0}}},
		{"a new day lifts the cap until evaluated", 10.5, 13 * time.Hour, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, now := gateAt(tt.perHour, gatePolicy())
			if got := g.Caps(now.Add(tt.later)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Caps = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestGateEvaluateAlertsOnceAndForgetsRemovedPolicies(t *testing.T) {
	g, now := gateAt(9, gatePolicy())
	st := g.Statuses()
	if len(st) != 1 || !near(st[0].Spend.Actual, 108) || !st[0].Active(BlockScaleUp) || st[0].Active(ScaleToFloor) {
		t.Fatalf("status = %+v", st)
	}
	ivs := []Interval{{Workload: "llm", USDPerHour: 9, From: t0}}
	if again := g.Evaluate(now.Add(time.Minute), ivs); len(again) != 0 {
		t.Errorf("second evaluation alerted again: %v", again)
	}
	g.SetPolicies(nil)
	if len(g.Statuses()) != 0 || len(g.Caps(now)) != 0 {
		t.Error("a removed policy still has a status or caps")
	}
	g.SetPolicies([]Policy{gatePolicy()})
	if got := g.Evaluate(now.Add(2*time.Minute), ivs); len(got) != 3 {
		t.Errorf("a re-created policy sent %d alerts, want 3 (80%%, 100%%, forecast 100%%)", len(got))
	}
}

func TestRiseCountsAScaleInEveryScopeOfItsWorkload(t *testing.T) {
	p := Plan{Workload: "llm", Team: "search", Changes: []Change{launch("x1", placement.ReasonReclaim, 12),
		{ActionID: "x3", Kind: placement.ActionScale, Reason: placement.ReasonBudget, USDPerHour: -12, BelowMinimum: true}}}
	p.Changes[0].Provider, p.Changes[0].Location = "aws", "aws-use1"
	tests := []struct {
		name  string
		scope Scope
		want  float64
	}{
		{"the launch's provider", Scope{Provider: "aws"}, 0},
		{"another provider: only the scale", Scope{Provider: "gcp"}, -12},
		{"the workload", Scope{Workload: "llm"}, 0},
		{"another team: nothing", Scope{Team: "ml"}, 0},
	}
	for _, tt := range tests {
		if got := p.Rise(tt.scope); got != tt.want {
			t.Errorf("%s: Rise = %v, want %v", tt.name, got, tt.want)
		}
	}
}
