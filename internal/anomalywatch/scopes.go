package anomalywatch

import (
	"strings"

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

// Sample sorts what runs now into the scopes watched, each a map of its series to their $/h:
// every workload and team of the fleet file, and every budget policy's scope. A scope with
// nothing running is there, empty: it spends nothing, which its detector must see.
func Sample(cfg *fleet.Config, policies []budget.Policy, burns []arbiter.Burn) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	add := func(scope, series string, usd float64) {
		if out[scope] == nil {
			out[scope] = map[string]float64{}
		}
		if series != "" {
			out[scope][series] += usd
		}
	}
	for _, w := range cfg.Workloads {
		add("workload="+w.Name, "", 0)
		if w.Team != "" {
			add("team="+w.Team, "", 0)
		}
	}
	for _, p := range policies {
		add("budget="+p.Name, "", 0)
	}
	for _, b := range burns {
		key := SeriesKey(b)
		add("workload="+b.Workload, key, b.USDPerHour)
		if b.Team != "" {
			add("team="+b.Team, key, b.USDPerHour)
		}
		for _, p := range policies {
			if p.Scope.Matches(b.Workload, b.Team, b.Provider, b.Location) {
				add("budget="+p.Name, key, b.USDPerHour)
			}
		}
	}
	return out
}

// Moved is what a child series adds to its scope's name: its dimensions less those the scope
// fixes ("location=aws-use1,gpu_model=H100-80GB,market=spot" in "workload=llm").
func Moved(scope, series string) string {
	fixed := map[string]bool{}
	for part := range strings.SplitSeq(scope, ",") {
		fixed[part] = true
	}
	var kept []string
	for part := range strings.SplitSeq(series, ",") {
		if !fixed[part] {
			kept = append(kept, part)
		}
	}
	return strings.Join(kept, ",")
}
