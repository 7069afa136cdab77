package replay

import "math/rand/v2"

func init() {
	register("spothedge", func(env Env) (Policy, error) {
		return &spotHedge{rng: rand.New(rand.NewPCG(env.Seed, 0x5107_4ed6e))}, nil
	}, false)
}

// spotHedge is SkyServe's policy as REPLAY.md states it: N+E spot replicas spread over zones that
// have not failed it lately, chosen at random, and on-demand to cover whatever spot is not ready.
type spotHedge struct {
	rng *rand.Rand
	// preemptive[z] marks a zone where the policy lately got fewer instances than it asked for.
	preemptive []bool
	// lastAsked is what the policy asked for at the previous tick, to compare with what it got.
	lastAsked []int
}

func (p *spotHedge) Decide(obs *Observation) Decision {
	zones := len(obs.Zones)
	if p.preemptive == nil {
		p.preemptive = make([]bool, zones)
	}
	t := obs.Tick
	if t > 0 {
		p.updateZones(obs.Held[t-1])
	}
	p.reviveIfFew()
	spot, missing := carryOver(obs)
	for ; missing > 0; missing-- {
		spot[p.pick(spot)]++
	}
	p.lastAsked = spot
	return Decision{Spot: spot, OnDemand: p.fallback(obs)}
}

// updateZones marks zones preemptive where the clamp took instances, active again where the
// policy got all it asked for (and asked for some); other zones keep their state.
func (p *spotHedge) updateZones(held []int) {
	for z, got := range held {
		asked := p.lastAsked[z]
		switch {
		case asked > got:
			p.preemptive[z] = true
		case asked > 0 && asked == got:
			p.preemptive[z] = false
		}
	}
}

// reviveIfFew makes every zone active again when at most min(1, zones-3) are left active. With
// fewer than three zones that bound is negative and the peer never revives; here a policy with no
// active zone left revives them all rather than having nowhere to launch.
func (p *spotHedge) reviveIfFew() {
	active := 0
	for _, pre := range p.preemptive {
		if !pre {
			active++
		}
	}
	if active <= min(1, len(p.preemptive)-3) || active == 0 {
		clear(p.preemptive)
	}
}

// pick chooses the zone of one launch: an active zone holding none yet, else any active zone,
// uniformly at random.
func (p *spotHedge) pick(spot []int) int {
	var empty, active []int
	for z, pre := range p.preemptive {
		if pre {
			continue
		}
		active = append(active, z)
		if spot[z] == 0 {
			empty = append(empty, z)
		}
	}
	if len(empty) > 0 {
		return empty[p.rng.IntN(len(empty))]
	}
	return active[p.rng.IntN(len(active))]
}

// fallback holds min(N, N+E - ready spot at t-1) on-demand when that is positive: started at
// once, dropped as soon as N+E spot are ready again.
func (p *spotHedge) fallback(obs *Observation) int {
	r := obs.Rules
	short := r.Target + r.Extra - obs.ReadySpot(obs.Tick-1)
	return max(0, min(r.Target, short))
}
