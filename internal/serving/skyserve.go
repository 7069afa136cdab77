package serving

import "fmt"

func init() {
	register("skyserve", newSkyServe, false)
}

// skyServe is SkyServe serving with spot as its docs configure it (SERVING.md): one GPU type,
// the one with the lowest spot price per token; the request-rate autoscaler (autoscaler.go);
// `use_spot` with the dynamic-fallback spot placer over that type's zones; and
// `dynamic_ondemand_fallback`. Sources: skypilot-org/skypilot sky/serve/autoscalers.py
// (FallbackRequestRateAutoscaler) and sky/serve/spot_placer.py (DynamicFallbackSpotPlacer),
// which implement SpotHedge as ../shared/REPLAY.md states it:
//   - spot to provision = the target (base_ondemand_fallback_replicas = 0, no overprovision);
//     missing spot replicas (never launched, failed or preempted) are launched again;
//   - each launch goes to an active zone holding none of the service's replicas, else to any
//     active zone; among those the cheapest (spot_placer.py's _min_cost_location: zones differ in
//     price here, so the artifact's uniform pick of REPLAY.md becomes the source's cheapest pick),
//     ties to the first zone;
//   - a zone where the service got fewer replicas than it asked for becomes preemptive; one where
//     it got all it asked for (and asked for some) active again; when at most min(1, zones-3)
//     zones are left active (REPLAY.md; spot_placer.py: fewer than 2), all are active again;
//   - on-demand = min(target, max(0, target - ready spot)) replicas of the same type, started at
//     once and dropped as soon as enough spot is ready;
//   - scaling spot down removes replicas that are not ready yet first, then ready ones
//     (_select_nonterminal_replicas_to_scale_down puts launching replicas first); within each,
//     from the dearest zone (the simulator does not tell a policy which replica is newest).
type skyServe struct {
	n      int
	zones  []int // the type's spot sources
	od     int   // the type's cheapest on-demand source (per token)
	price  []float64
	scaler *autoscaler
	// preemptive marks zones (by index into zones) the placer avoids; asked is what it asked for
	// at the previous tick, to compare with what the clamp left it.
	preemptive []bool
	asked      []int
}

func newSkyServe(env Env) (Policy, error) {
	s, ok := cheapestPerToken(env.Sources, func(s Source) bool { return s.Spot })
	if !ok {
		return nil, fmt.Errorf("skyserve needs a spot source; the inputs have none")
	}
	typ := env.Sources[s].Type
	p := &skyServe{n: len(env.Sources), scaler: newAutoscaler(env.Sources[s].Rate)}
	for i, src := range env.Sources {
		if src.Spot && src.Type == typ {
			p.zones = append(p.zones, i)
		}
		p.price = append(p.price, src.USDPerHour)
	}
	p.od, ok = cheapestPerToken(env.Sources, func(src Source) bool { return !src.Spot && src.Type == typ })
	if !ok {
		return nil, fmt.Errorf("skyserve: no on-demand %s source for dynamic_ondemand_fallback", typ)
	}
	p.preemptive = make([]bool, len(p.zones))
	p.asked = make([]int, len(p.zones))
	return p, nil
}

func (p *skyServe) Decide(obs *Observation) Decision {
	target := p.scaler.decide(obs)
	spot := make([]int, len(p.zones))
	ready := make([]int, len(p.zones))
	if t := obs.Tick; t > 0 {
		for k, i := range p.zones {
			spot[k], ready[k] = obs.Held[t-1][i], obs.Ready[t-1][i]
		}
		p.updateZones(spot)
	}
	p.reviveIfFew()
	have, readySpot := sum(spot), sum(ready)
	for ; have < target; have++ {
		spot[p.pick(spot)]++
	}
	p.scaleDown(spot, ready, have-target)
	copy(p.asked, spot)

	held := make([]int, p.n)
	for k, i := range p.zones {
		held[i] = spot[k]
	}
	held[p.od] = min(target, max(0, target-readySpot))
	return Decision{Held: held}
}

// updateZones marks zones preemptive where the clamp took replicas, active where the service got
// all it asked for (and asked for some).
func (p *skyServe) updateZones(got []int) {
	for k := range p.zones {
		switch {
		case p.asked[k] > got[k]:
			p.preemptive[k] = true
		case p.asked[k] > 0 && p.asked[k] == got[k]:
			p.preemptive[k] = false
		}
	}
}

// reviveIfFew makes every zone active again when at most min(1, zones-3) are active, or none.
func (p *skyServe) reviveIfFew() {
	active := 0
	for _, pre := range p.preemptive {
		if !pre {
			active++
		}
	}
	if active <= min(1, len(p.zones)-3) || active == 0 {
		clear(p.preemptive)
	}
}

// pick is the zone of one launch: the cheapest active zone holding none, else the cheapest
// active zone.
func (p *skyServe) pick(spot []int) int {
	best := -1
	for pass := range 2 {
		for k := range p.zones {
			if p.preemptive[k] || (pass == 0 && spot[k] > 0) {
				continue
			}
			if best < 0 || p.price[p.zones[k]] < p.price[p.zones[best]] {
				best = k
			}
		}
		if best >= 0 {
			return best
		}
	}
	return 0 // unreachable: reviveIfFew leaves at least one zone active
}

// scaleDown removes extra spot replicas: not-ready ones first, then ready ones, each from the
// dearest zone first.
func (p *skyServe) scaleDown(spot, ready []int, extra int) {
	for _, readyToo := range []bool{false, true} {
		for extra > 0 {
			k := -1
			for j := range p.zones {
				spare := spot[j] - ready[j]
				if readyToo {
					spare = spot[j]
				}
				if spare > 0 && (k < 0 || p.price[p.zones[j]] >= p.price[p.zones[k]]) {
					k = j
				}
			}
			if k < 0 {
				break
			}
			spot[k]--
			extra--
		}
	}
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}
