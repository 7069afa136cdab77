package arbiter

import (
	"slices"

	"github.com/bursar-dev/bursar/internal/actuate"
)

// Burn is what one group of replicas costs now: its ready replicas at the price of the offer
// they run on. The anomaly watcher (internal/anomalywatch) samples it every few minutes.
type Burn struct {
	Workload, Team, Provider, Location, Market, Offer, GPUModel string
	Ready                                                       int
	GPUs                                                        float64 // all ready replicas together
	USDPerHour                                                  float64 // all ready replicas together
}

// Burning is what every group the actuators last reported costs per hour now, priced like the
// budgets' spend (ready replicas × their offer's price; an offer with no price seen costs 0). A
// standby folds the leader's replica.state too, so its answer is the same and its watcher stays
// warm. Groups come in workload, location, market order.
func (s *Service) Burning() []Burn { return s.mk.burning() }

func (m *market) burning() []Burn {
	obs := m.groups()
	slices.SortFunc(obs, func(a, b actuate.Observed) int { return actuate.CompareGroups(a.Group, b.Group) })
	out := make([]Burn, 0, len(obs))
	for _, o := range obs {
		b := Burn{Workload: o.Workload, Location: o.Location, Market: string(o.Market), Offer: o.Offer, Ready: o.Ready}
		if w, ok := m.cfg.Workload(o.Workload); ok {
			b.Team = w.Team
		}
		if l, ok := m.cfg.Location(o.Location); ok {
			b.Provider = l.Provider
		}
		if off, ok := m.offers.get(o.Offer); ok {
			b.GPUModel = off.GPUModel
			b.USDPerHour = off.PricePerHour * float64(max(o.Ready, 0))
			b.GPUs = float64(off.GPUCount * max(o.Ready, 0))
		}
		out = append(out, b)
	}
	return out
}
