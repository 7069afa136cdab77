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
// Restores of lost capacity do not count under a policy that restores first: it never holds them,
// and tells of every one adding spend in its scope when the rise with them is over its line.
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
			p.Restore = rapid.SampledFrom([]Restore{RestoreFirst, RestoreAsk}).Draw(t, "restore")
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
				c.Restores = c.Kind == placement.ActionLaunch && rapid.Bool().Draw(t, "restores")
				pl.Changes = append(pl.Changes, c)
			}
			plans = append(plans, pl)
		}
		g, now := gateAt(1, ps...)
		v := g.Review(context.Background(), plans, now)

		holder, teller := once(t, v.Holds, "waits for"), once(t, v.Told, "is told of in")
		for _, p := range ps {
			weighed := func(c Change) bool { return !c.Restores || p.Restore == RestoreAsk }
			for _, pl := range plans {
				for _, c := range pl.Changes {
					if c.USDPerHour <= 0 || !pl.inScope(p.Scope, c) {
						continue
					}
					_, held := holder[c.ActionID]
					_, told := teller[c.ActionID]
					switch {
					case weighed(c) && riseOf(plans, p.Scope, weighed) > float64(p.ApproveOver) && !held:
						t.Fatalf("%s rises %.2f/h over %s, but %s (+%.2f/h) goes through", p.Name,
							riseOf(plans, p.Scope, weighed), p.ApproveOver, c.ActionID, c.USDPerHour)
					case !weighed(c) && riseOf(plans, p.Scope, anyChange) > float64(p.ApproveOver) && !held && !told:
						t.Fatalf("%s would have asked about restore %s (+%.2f/h), which nobody is told of", p.Name, c.ActionID, c.USDPerHour)
					}
				}
			}
		}
		for id := range teller {
			if _, held := holder[id]; held {
				t.Fatalf("restore %s is both held and told of", id)
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

// once maps each action of hs to its index, failing where one is in two.
func once(t *rapid.T, hs []Hold, what string) map[string]int {
	at := map[string]int{}
	for i, h := range hs {
		for _, id := range h.Actions {
			if j, ok := at[id]; ok {
				t.Fatalf("action %s %s %d and %d", id, what, j, i)
			}
			at[id] = i
		}
	}
	return at
}
