package budget

import (
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// verdictBuilder gathers what the policies say about one plan.
type verdictBuilder struct {
	blocked, waiting, reasons, policies, approvers []string
	timeout                                        time.Duration
}

func addOnce(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func (v *verdictBuilder) note(p Policy, reason string) {
	v.reasons = addOnce(v.reasons, reason)
	v.policies = addOnce(v.policies, p.Name)
}

func (v *verdictBuilder) block(p Policy, id, reason string) {
	v.blocked = addOnce(v.blocked, id)
	v.note(p, reason)
}

func (v *verdictBuilder) approve(p Policy, id, reason string) {
	v.waiting = addOnce(v.waiting, id)
	v.note(p, reason)
	for _, a := range p.Approvers {
		v.approvers = addOnce(v.approvers, a)
	}
	if t := p.Timeout(); p.Name != "" && (v.timeout == 0 || t < v.timeout) {
		v.timeout = t
	}
}

func (v *verdictBuilder) verdict() Verdict {
	out := Verdict{Outcome: Allow, Reasons: v.reasons, Policies: v.policies, Blocked: v.blocked,
		Approvers: v.approvers, Timeout: v.timeout}
	// An action both blocked and waiting for approval is blocked: approving it could not help.
	for _, id := range v.waiting {
		if !slices.Contains(v.blocked, id) {
			out.Approve = append(out.Approve, id)
		}
	}
	switch {
	case len(out.Blocked) > 0:
		out.Outcome = Blocked
	case len(out.Approve) > 0:
		out.Outcome = NeedsApproval
	}
	if out.Outcome == NeedsApproval && out.Timeout == 0 {
		out.Timeout = DefaultApprovalTimeout
	}
	return out
}

// PlansFromDecision splits a placement decision into one Plan per workload, in the order the
// workloads first appear, with each action's provider, location and cost taken from the snapshot
// the decision was made on. The plan id is the workload's first action id.
func PlansFromDecision(snap placement.Snapshot, d placement.Decision) []Plan {
	teams := map[string]string{}
	for _, w := range snap.Workloads {
		teams[w.ID] = w.Team
	}
	offers := map[string]placement.Offer{}
	for _, o := range snap.Offers {
		offers[o.ID] = o
	}
	providers := map[string]string{}
	for _, l := range snap.Locations {
		providers[l.ID] = l.Provider
	}
	var out []Plan
	index := map[string]int{}
	for _, a := range d.Actions {
		i, ok := index[a.Workload]
		if !ok {
			i = len(out)
			index[a.Workload] = i
			out = append(out, Plan{ID: a.ID, Workload: a.Workload, Team: teams[a.Workload]})
		}
		c := Change{ActionID: a.ID, Kind: a.Kind, Reason: a.Reason, USDPerHour: a.CostPerHour,
			BelowMinimum: a.NeedsApproval}
		if o, ok := offers[a.Offer]; ok && a.Kind != placement.ActionScale {
			c.Location, c.Provider = o.Location, providers[o.Location]
		}
		out[i].Changes = append(out[i].Changes, c)
	}
	return out
}
