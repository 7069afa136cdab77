package budget

import (
	"context"
	"reflect"
	"testing"

	"github.com/bursar-dev/bursar/internal/placement"
)

func restore(id string, reason placement.Reason, perHour float64) Change {
	c := launch(id, reason, perHour)
	c.Restores = true
	return c
}

// TestReviewRestoresFirstAndTellsAfter: under approve_over 5/h, a replacement of lost capacity is
// applied at once and its approvers are told after, whatever it adds; restore: ask holds it as
// before; discretionary rises beside it are held alone; block-scale-up and cuts below the minimum
// keep their rules.
func TestReviewRestoresFirstAndTellsAfter(t *testing.T) {
	always := gatePolicy()
	always.Thresholds = always.Thresholds[:1] // notify at 80% only: approve_over always holds
	ask := always
	ask.Restore = RestoreAsk
	below := Change{ActionID: "cut", Kind: placement.ActionScale, Reason: placement.ReasonBudget, USDPerHour: -8, BelowMinimum: true}
	tests := []struct {
		name        string
		perHour     float64
		policy      Policy
		changes     []Change
		wantOutcome Outcome
		wantBlocked []string
		wantHolds   [][]string
		wantTold    [][]string
	}{
		{"a reclaim's replacement over the line is applied and told of", 1, always,
			[]Change{restore("r", placement.ReasonReclaim, 6)}, Allow, nil, nil, [][]string{{"r"}}},
		{"an on-demand fallback for lost spot too", 1, always,
			[]Change{restore("r", placement.ReasonReclaim, 1), restore("f", placement.ReasonFallback, 9)}, Allow, nil, nil, [][]string{{"r", "f"}}},
		{"restore: ask holds it as before", 1, ask,
			[]Change{restore("r", placement.ReasonReclaim, 6)}, NeedsApproval, nil, [][]string{{"r"}}, nil},
		{"a restore under the line is nobody's news", 1, always,
			[]Change{restore("r", placement.ReasonReclaim, 4)}, Allow, nil, nil, nil},
		{"a restore that costs no more than the loss is not told of", 1, always,
			[]Change{restore("r", placement.ReasonReclaim, 6), {ActionID: "r", Kind: placement.ActionDrain, Reason: placement.ReasonReclaim,
				Provider: "gcp", Location: "gcp-usc1", USDPerHour: -6, Restores: true}}, Allow, nil, nil, nil},
		{"a demand rise beside a restore is held alone", 1, always,
			[]Change{restore("r", placement.ReasonFallback, 3), launch("up", placement.ReasonDemandUp, 6)},
			NeedsApproval, nil, [][]string{{"up"}}, [][]string{{"r"}}},
		{"under the line alone, over it with the restore: the rise goes, the restore is told of", 1, always,
			[]Change{restore("r", placement.ReasonFallback, 3), launch("up", placement.ReasonDemandUp, 3)},
			Allow, nil, nil, [][]string{{"r"}}},
		{"a hedge is never a restore", 1, always,
			[]Change{launch("h", placement.ReasonHedge, 6)}, NeedsApproval, nil, [][]string{{"h"}}, nil},
		{"block-scale-up blocks a failed launch's retry, which adds capacity", 9, gatePolicy(),
			[]Change{restore("retry", placement.ReasonDemandUp, 6)}, Blocked, []string{"retry"}, nil, nil},
		{"block-scale-up lets a reclaim's replacement through; it is told of", 9, gatePolicy(),
			[]Change{restore("r", placement.ReasonReclaim, 6)}, Allow, nil, nil, [][]string{{"r"}}},
		{"a cut below the minimum still asks", 1, always,
			[]Change{restore("r", placement.ReasonReclaim, 16), below}, NeedsApproval, nil, [][]string{{"cut"}}, [][]string{{"r"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, now := gateAt(tt.perHour, tt.policy)
			v := g.Review(context.Background(), []Plan{{Workload: "llm", Changes: tt.changes}}, now)
			var holds, told [][]string
			for _, h := range v.Holds {
				holds = append(holds, h.Actions)
			}
			for _, h := range v.Told {
				told = append(told, h.Actions)
				if len(h.Reasons) == 0 || !reflect.DeepEqual(h.Approvers, []string{"U1AAA"}) || !reflect.DeepEqual(h.Policies, []string{"llm-daily"}) {
					t.Errorf("told %+v lacks its reasons, approvers or policy", h)
				}
			}
			if v.Outcome != tt.wantOutcome || !reflect.DeepEqual(v.Blocked, tt.wantBlocked) ||
				!reflect.DeepEqual(holds, tt.wantHolds) || !reflect.DeepEqual(told, tt.wantTold) {
				t.Errorf("Review = %s blocked %v holds %v told %v\nwant %s blocked %v holds %v told %v", v.Outcome, v.Blocked, holds, told,
					tt.wantOutcome, tt.wantBlocked, tt.wantHolds, tt.wantTold)
			}
		})
	}
}
