package anomalywatch

import (
	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// SeriesKey names the cost series of a group: workload × location × GPU model × market, the
// dimensions in this fixed order (events.CostAnomaly.Series).
func SeriesKey(b arbiter.Burn) string {
	gpu := b.GPUModel
	if gpu == "" {
		gpu = "unknown"
	}
	return "workload=" + b.Workload + ",location=" + b.Location + ",gpu_model=" + gpu + ",market=" + b.Market
}

// Sample sorts what runs now into the scopes watched, each a map of its series to their $/h and
// GPUs:
// every workload and team of the fleet file, and every budget policy's scope. A scope with
// nothing running is there, empty: it spends nothing, which its detector must see.
func Sample(cfg *fleet.Config, policies []budget.Policy, burns []arbiter.Burn) map[string]map[string]anomaly.Child {
	out := map[string]map[string]anomaly.Child{}
	add := func(scope, series string, b arbiter.Burn) {
		if out[scope] == nil {
			out[scope] = map[string]anomaly.Child{}
		}
		if series != "" {
			c := out[scope][series]
			c.USDPerHour += b.USDPerHour
			c.GPUs += b.GPUs
			out[scope][series] = c
		}
	}
	for _, w := range cfg.Workloads {
		add("workload="+w.Name, "", arbiter.Burn{})
		if w.Team != "" {
			add("team="+w.Team, "", arbiter.Burn{})
		}
	}
	for _, p := range policies {
		add("budget="+p.Name, "", arbiter.Burn{})
	}
	for _, b := range burns {
		key := SeriesKey(b)
		add("workload="+b.Workload, key, b)
		if b.Team != "" {
			add("team="+b.Team, key, b)
		}
		for _, p := range policies {
			if p.Scope.Matches(b.Workload, b.Team, b.Provider, b.Location) {
				add("budget="+p.Name, key, b)
			}
		}
	}
	return out
}
