package arbiter

import (
	"log/slog"
	"strings"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/placement"
)

// unplaced holds the workloads a full plan last warned of as placing nowhere, with why. It
// belongs to the full pass: only full passes, one at a time under planMu, warn, so it takes no
// lock of its own and none of the books'.
type unplaced map[string]string

// warn logs, at WARN, each workload that a full plan d places nowhere (it wants replicas and the
// plan can place none), with the planner's reason: a fleet file whose GPU models, markets or
// residency match no offer otherwise shows only as a workload that never runs. Each is warned of
// once, again only if its reason changes or once it has placed and lost everything again, so a
// pass every few seconds does not repeat it. d is a whole-estate plan; planMu is held.
func (u *unplaced) warn(log *slog.Logger, d placement.Decision) {
	now := unplaced{}
	for _, sf := range d.Shortfalls {
		if sf.Wanted > 0 && sf.Placed == 0 && sf.Why != placement.WhyNoOffers {
			now[sf.Workload] = sf.Why
		}
	}
	for w, why := range now {
		if old, ok := (*u)[w]; !ok || old != why {
			log.Warn("a workload can place no replica; check its gpu, markets and residency in the fleet file against the offers seen",
				"workload", w, "why", why)
		}
	}
	*u = now
}

// warnPolicies logs, at WARN, each budget policy that can see no spend of this fleet (a scope
// naming no workload) or compares USD spend with a limit in another currency. warned holds what
// was said of each policy, so a policy is warned of once, and again only when its warnings change.
func (b *Budgets) warnPolicies(ps []budget.Policy, warned map[string]string) {
	for _, p := range ps {
		ws := strings.Join(budget.Warnings(p, b.o.Config), "; ")
		if ws != "" && warned[p.Name] != ws {
			b.o.Log.Warn("a budget policy will not work as written", "policy", p.Name, "why", ws)
		}
		warned[p.Name] = ws
	}
}
