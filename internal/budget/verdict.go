package budget

import (
	"slices"
	"time"
)

// verdictBuilder gathers what the policies say about one pass's plans.
type verdictBuilder struct {
	blocked, reasons, policies []string
	asks                       []Hold // one per policy rule that wants an approval
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

// approve notes that the actions ids wait for an approval under p (no name: no policy covers them).
func (v *verdictBuilder) approve(p Policy, ids []string, reason string) {
	v.note(p, reason)
	h := Hold{Actions: slices.Clone(ids), Reasons: []string{reason}, Approvers: slices.Clone(p.Approvers)}
	if p.Name != "" {
		h.Policies, h.Timeout = []string{p.Name}, p.Timeout()
	}
	v.asks = append(v.asks, h)
}

// Hold is a set of actions that wait for one approval: they are applied or dropped together.
type Hold struct {
	Actions   []string // action ids, possibly of several workloads
	Reasons   []string
	Policies  []string
	Approvers []string      // Slack user or group ids; union over the policies
	Timeout   time.Duration // the shortest of the policies'
}

// merge adds o to h: the union of everything, the shorter timeout.
func (h *Hold) merge(o Hold) {
	for _, id := range o.Actions {
		h.Actions = addOnce(h.Actions, id)
	}
	for _, r := range o.Reasons {
		h.Reasons = addOnce(h.Reasons, r)
	}
	for _, p := range o.Policies {
		h.Policies = addOnce(h.Policies, p)
	}
	for _, a := range o.Approvers {
		h.Approvers = addOnce(h.Approvers, a)
	}
	if o.Timeout > 0 && (h.Timeout == 0 || o.Timeout < h.Timeout) {
		h.Timeout = o.Timeout
	}
}

// holds drops blocked actions from the asks (approving them could not help) and merges asks that
// share an action, so each action waits for exactly one approval.
func (v *verdictBuilder) holds() []Hold {
	var out []Hold
	for _, a := range v.asks {
		a.Actions = slices.DeleteFunc(slices.Clone(a.Actions), func(id string) bool { return slices.Contains(v.blocked, id) })
		if len(a.Actions) == 0 {
			continue
		}
		merged := Hold{}
		merged.merge(a)
		out = slices.DeleteFunc(out, func(h Hold) bool {
			if slices.ContainsFunc(h.Actions, func(id string) bool { return slices.Contains(merged.Actions, id) }) {
				h.merge(merged)
				merged = h
				return true
			}
			return false
		})
		out = append(out, merged)
	}
	for i := range out {
		if out[i].Timeout == 0 {
			out[i].Timeout = DefaultApprovalTimeout
		}
	}
	return out
}

func (v *verdictBuilder) verdict() Verdict {
	out := Verdict{Outcome: Allow, Reasons: v.reasons, Policies: v.policies, Blocked: v.blocked, Holds: v.holds()}
	for _, h := range out.Holds {
		for _, id := range h.Actions {
			out.Approve = addOnce(out.Approve, id)
		}
		for _, a := range h.Approvers {
			out.Approvers = addOnce(out.Approvers, a)
		}
		if out.Timeout == 0 || h.Timeout < out.Timeout {
			out.Timeout = h.Timeout
		}
	}
	switch {
	case len(out.Blocked) > 0:
		out.Outcome = Blocked
	case len(out.Approve) > 0:
		out.Outcome = NeedsApproval
	}
	return out
}
