package anomalywatch

import (
	"context"
	"slices"
	"strings"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
)

// Remedier proposes a remedy for approval and returns the hold's id ("" when nothing was asked);
// *arbiter.Service is one.
type Remedier interface {
	Remedy(ctx context.Context, r arbiter.RemedyRequest) (string, error)
}

var _ Remedier = (*arbiter.Service)(nil)

// remedy hands the arbiter the remedies change c calls for: an open or updated anomaly of a
// workload's own scope whose cost moved to on-demand, for every budget policy covering the
// workload that lists the fallback remedy (the first by name asks; the arbiter keeps one open per
// workload and one per anomaly), unless people answered its cause as expected. Only the workload's scope asks: its team's and budgets'
// anomalies have the same cause, and would ask the same question again under other ids.
func (w *Watcher) remedy(ctx context.Context, c change) {
	if w.o.Remedies == nil || c.ev.State == StateClosed || !w.alert(c.a) { // a cause answered as expected is left alone
		return
	}
	workload, ok := strings.CutPrefix(c.ev.Series, "workload=")
	locs := onDemandLocations(c)
	if !ok || strings.ContainsAny(workload, ",#") || len(locs) == 0 {
		return
	}
	p, ok := w.remedyPolicy(workload, locs)
	if !ok {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, outsideCall)
	defer cancel()
	hold, err := w.o.Remedies.Remedy(rctx, arbiter.RemedyRequest{Anomaly: c.ev.Anomaly, Workload: workload, Policy: p,
		Remedy: budget.RemedyFallback, Expected: c.ev.Expected, Observed: c.ev.Observed})
	switch {
	case err != nil:
		w.o.Log.Warn("proposing a remedy for a cost anomaly", "anomaly", c.ev.Anomaly, "workload", workload, "err", err)
	case hold != "":
		w.o.Log.Info("remedy proposed for approval", "anomaly", c.ev.Anomaly, "workload", workload, "policy", p.Name, "hold", hold)
	}
}

// onDemandLocations are the locations of the anomaly's on-demand series that rose above their
// baseline: where on-demand spend explains it. None: the anomaly has another cause.
func onDemandLocations(c change) []string {
	var out []string
	for _, x := range c.a.Explanation {
		dims := strings.Split(x.Series, ",")
		if x.Delta() <= 0 || !slices.Contains(dims, "market="+string(events.OnDemand)) {
			continue
		}
		for _, d := range dims {
			if loc, ok := strings.CutPrefix(d, "location="); ok && !slices.Contains(out, loc) {
				out = append(out, loc)
			}
		}
	}
	return out
}

// remedyPolicy is the first policy by name that wants the fallback remedy and covers workload in
// one of locs.
func (w *Watcher) remedyPolicy(workload string, locs []string) (budget.Policy, bool) {
	team := ""
	if wl, ok := w.o.Config.Workload(workload); ok {
		team = wl.Team
	}
	ps := slices.Clone(w.policies())
	slices.SortFunc(ps, func(a, b budget.Policy) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range ps {
		if !p.Wants(budget.RemedyFallback) {
			continue
		}
		for _, loc := range locs {
			provider := ""
			if l, ok := w.o.Config.Location(loc); ok {
				provider = l.Provider
			}
			if p.Scope.Matches(workload, team, provider, loc) {
				return p, true
			}
		}
	}
	return budget.Policy{}, false
}
