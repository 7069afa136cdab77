package budget

import (
	"slices"
	"time"
)

// verdictBuilder gathers what the policies say about one pass's plans.
type verdictBuilder struct {
	blocked, reasons, policies []string
	asks                       []Hold // one per policy rule that wants an approval
	tells                      []Hold // one per policy whose approvers hear of restores after
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
	v.asks = append(v.asks, askOf(p, ids, reason))
}

// tell notes that p's approvers are to hear of the restores ids after they are applied. It holds
// nothing back, so the verdict's outcome and reasons do not change.
func (v *verdictBuilder) tell(p Policy, ids []string, reason string) {
	v.tells = append(v.tells, askOf(p, ids, reason))
}

func askOf(p Policy, ids []string, reason string) Hold {
	h := Hold{Actions: slices.Clone(ids), Reasons: []string{reason}, Approvers: slices.Clone(p.Approvers)}
	if p.Name != "" {
		h.Policies, h.Timeout = []string{p.Name}, p.Timeout()
	}
	return h
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

// merged drops the actions in drop from asks (blocked ones: approving them could not help; held
// ones are not applied, so nobody is told of them) and merges asks that share an action, so each
// action is in exactly one.
func merged(asks []Hold, drop []string) []Hold {
	var out []Hold
	for _, a := range asks {
		a.Actions = slices.DeleteFunc(slices.Clone(a.Actions), func(id string) bool { return slices.Contains(drop, id) })
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
	out := Verdict{Outcome: Allow, Reasons: v.reasons, Policies: v.policies, Blocked: v.blocked, Holds: merged(v.asks, v.blocked)}
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
	out.Told = merged(v.tells, append(slices.Clone(out.Blocked), out.Approve...))
	switch {
	case len(out.Blocked) > 0:
		out.Outcome = Blocked
	case len(out.Approve) > 0:
		out.Outcome = NeedsApproval
	}
	return out
}
