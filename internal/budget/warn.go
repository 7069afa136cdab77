package budget

import (
	"fmt"
	"strings"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// Warnings lists what makes policy p see no spend, or the wrong spend, in the fleet cfg: a scope
// that matches no workload at any location (a typo in a name, or a workload since removed), and a
// limit in a currency other than USD (stored before such policies were refused). A policy with
// warnings is still valid: the fleet file may be the one that is behind. cfg nil checks only the
// currency.
func Warnings(p Policy, cfg *fleet.Config) []string {
	var out []string
	if p.Currency != Currency {
		out = append(out, fmt.Sprintf("its limit is in %s, but spend is in USD and is compared with it unconverted; set it again in USD",
			p.Currency))
	}
	if cfg != nil && !p.Scope.All && !scopeMatchesFleet(p.Scope, cfg) {
		out = append(out, fmt.Sprintf("scope %s matches no workload of the fleet file (workloads: %s), so it will never see spend; check the names",
			p.Scope, workloadNames(cfg)))
	}
	return out
}

// scopeMatchesFleet says whether some workload of cfg could run under the scope at some location.
func scopeMatchesFleet(sc Scope, cfg *fleet.Config) bool {
	for _, w := range cfg.Workloads {
		for _, l := range cfg.Locations {
			if sc.Matches(w.Name, w.Team, l.Provider, l.Name) {
				return true
			}
		}
	}
	return false
}

func workloadNames(cfg *fleet.Config) string {
	names := make([]string, 0, len(cfg.Workloads))
	for _, w := range cfg.Workloads {
		names = append(names, w.Name)
	}
	return strings.Join(names, ", ")
}
