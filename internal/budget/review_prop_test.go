package budget

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/bursar-dev/bursar/internal/placement"
)

// TestReviewNeverLetsARiseOverTheLimitThrough: for any pass's plans and any policies with
// approve_over, a policy whose scope rises by more than its limit net holds every action adding
// spend in its scope; each held action waits for exactly one hold; a held move holds its drains.
func TestReviewNeverLetsARiseOverTheLimitThrough(t *testing.T) {
	workloads := map[string]string{"llm": "search", "emb": "search", "rag": "ml"}
	locations := map[string]string{"gcp-usc1": "gcp", "aws-use1": "aws"}
	scopes := []Scope{{Workload: "llm"}, {Team: "search"}, {Provider: "aws"}, {Location: "gcp-usc1"}, {}}
	reasons := []placement.Reason{placement.ReasonDemandUp, placement.ReasonCheaperOffer, placement.ReasonReclaim,
		placement.ReasonHedge, placement.ReasonDemandDown, placement.ReasonResidency}
	rapid.Check(t, func(t *rapid.T) {
		var ps []Policy
		for i := range rapid.IntRange(1, 3).Draw(t, "policies") {
			p := gatePolicy()
			p.Name = fmt.Sprintf("p%d", i)
			p.Scope = rapid.SampledFrom(scopes).Draw(t, "scope")
			p.Thresholds = p.Thresholds[:1] // notify only: approve_over always holds
			p.ApproveOver = Rate(rapid.Float64Range(0.5, 10).Draw(t, "approve_over"))
			ps = append(ps, p)
		}
		var plans []Plan
		n := 0
		for _, w := range rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"llm", "emb", "rag"}), 1, 3, rapid.ID).Draw(t, "workloads") {
			pl := Plan{Workload: w, Team: workloads[w]}
			for range rapid.IntRange(1, 4).Draw(t, "changes") {
				n++
				loc := rapid.SampledFrom([]string{"gcp-usc1", "aws-use1"}).Draw(t, "location")
				c := Change{ActionID: fmt.Sprintf("a%d", n), Reason: rapid.SampledFrom(reasons).Draw(t, "reason"),
					Location: loc, Provider: locations[loc], USDPerHour: rapid.Float64Range(0.1, 20).Draw(t, "usd")}
				c.Kind = placement.ActionLaunch
				if rapid.Bool().Draw(t, "drain") {
					c.Kind, c.USDPerHour = placement.ActionDrain, -c.USDPerHour
				}
				pl.Changes = append(pl.Changes, c)
			}
			plans = append(plans, pl)
		}
		g, now := gateAt(1, ps...)
		v := g.Review(context.Background(), plans, now)

		holder := map[string]int{}
		for i, h := range v.Holds {
			for _, id := range h.Actions {
				if j, ok := holder[id]; ok {
					t.Fatalf("action %s waits for holds %d and %d", id, j, i)
				}
				holder[id] = i
			}
		}
		for _, p := range ps {
			if riseOf(plans, p.Scope) <= float64(p.ApproveOver) {
				continue
			}
			for _, pl := range plans {
				for _, c := range pl.Changes {
					if _, held := holder[c.ActionID]; c.USDPerHour > 0 && pl.inScope(p.Scope, c) && !held {
						t.Fatalf("%s rises %.2f/h over %s, but %s (+%.2f/h) goes through", p.Name,
							riseOf(plans, p.Scope), p.ApproveOver, c.ActionID, c.USDPerHour)
					}
				}
			}
		}
		for _, pl := range plans {
			heldMove := slices.ContainsFunc(pl.Changes, func(c Change) bool {
				_, held := holder[c.ActionID]
				return held && c.Kind == placement.ActionLaunch && isMove(c.Reason)
			})
			for _, c := range pl.Changes {
				if _, held := holder[c.ActionID]; heldMove && c.Kind == placement.ActionDrain && isMove(c.Reason) && !held {
					t.Fatalf("a held move's drain %s goes through alone", c.ActionID)
				}
			}
		}
	})
}
