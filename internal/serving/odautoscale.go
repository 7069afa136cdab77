package serving

import "fmt"

func init() {
	register("od-autoscale", func(env Env) (Policy, error) {
		i, ok := cheapestPerToken(env.Sources, func(s Source) bool { return !s.Spot })
		if !ok {
			return nil, fmt.Errorf("od-autoscale needs an on-demand source; the inputs have none")
		}
		return &odAutoscale{source: i, n: len(env.Sources), scaler: newAutoscaler(env.Sources[i].Rate)}, nil
	}, false)
}

// odAutoscale is what a team runs without an arbiter (SERVING.md): on-demand only, on the single
// (GPU type, zone) with the lowest on-demand price per token, sized by SkyServe's request-rate
// autoscaler (autoscaler.go, skypilot-org/skypilot sky/serve/autoscalers.py).
type odAutoscale struct {
	source, n int
	scaler    *autoscaler
}

func (p *odAutoscale) Decide(obs *Observation) Decision {
	held := make([]int, p.n)
	held[p.source] = p.scaler.decide(obs)
	return Decision{Held: held}
}

// cheapestPerToken is the source, among those keep accepts, with the lowest price per token/s;
// ties go to the first in order.
func cheapestPerToken(sources []Source, keep func(Source) bool) (int, bool) {
	best, found := 0, false
	for i, s := range sources {
		if !keep(s) || s.Rate <= 0 {
			continue
		}
		if !found || s.USDPerHour/s.Rate < sources[best].USDPerHour/sources[best].Rate {
			best, found = i, true
		}
	}
	return best, found
}
