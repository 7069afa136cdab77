package budget

import (
	"fmt"
	"slices"
	"strings"
)

// Remedy names a fix a policy wants proposed to its approvers when an anomaly in its scope has
// a known cause. A remedy is only ever proposed: it waits for an approver like a held plan.
type Remedy string

// The remedies a policy can ask for.
const (
	// RemedyFallback: when the anomaly's cost moved to on-demand (a fallback after a reclaim that
	// stayed there) and spot capacity for the workload is priced again, propose moving its
	// on-demand replicas back to spot.
	RemedyFallback Remedy = "fallback"
)

var remedies = []Remedy{RemedyFallback}

// Wants reports whether the policy asks for remedy r to be proposed.
func (p Policy) Wants(r Remedy) bool { return slices.Contains(p.Remedies, r) }

// ParseRemedies reads the remedies of `--remedy fallback` (repeatable, or comma-separated).
func ParseRemedies(list []string) ([]Remedy, error) {
	var out []Remedy
	for _, s := range list {
		for part := range strings.SplitSeq(s, ",") {
			r := Remedy(strings.TrimSpace(part))
			if !slices.Contains(remedies, r) {
				return nil, fmt.Errorf("%q is not a remedy: want fallback (propose moving a stuck on-demand fallback back to spot)", part)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// validateRemedies checks the remedies are known, not repeated, and that someone can approve them.
func (p Policy) validateRemedies(bad func(string, string, ...any)) {
	for i, r := range p.Remedies {
		field := fmt.Sprintf("remedies[%d]", i)
		switch {
		case !slices.Contains(remedies, r):
			bad(field, "%q is not a remedy: want fallback (propose moving a stuck on-demand fallback back to spot)", r)
		case slices.Index(p.Remedies, r) < i:
			bad(field, "repeats %s", r)
		}
	}
	if len(p.Remedies) > 0 && len(p.Approvers) == 0 && !p.Has(RequireApproval) && p.ApproveOver <= 0 { // else said once already
		bad("approvers", "required when remedies are proposed: a remedy waits for an approver; list Slack user (U…) or group (S…) ids")
	}
}
