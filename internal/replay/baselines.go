package replay

// The simple baselines of REPLAY.md: on-demand only, and two spot-only spreads that ignore
// failures. They exist to frame the comparison: what spot saves with no care, and what it costs
// in availability.

func init() {
	register("on-demand", func(env Env) (Policy, error) { return onDemand{n: env.Rules.Target}, nil }, false)
	register("even-spread", func(env Env) (Policy, error) { return &evenSpread{}, nil }, false)
	register("round-robin", func(env Env) (Policy, error) { return &roundRobin{}, nil }, false)
}

// onDemand holds Target on-demand instances and no spot.
type onDemand struct{ n int }

func (p onDemand) Decide(obs *Observation) Decision {
	return Decision{Spot: make([]int, len(obs.Zones)), OnDemand: p.n}
}

// evenSpread tops spot up to N+E each tick by water-filling: each missing instance goes to the
// zone holding fewest, ties to the first zone in trace order, whatever failed before.
type evenSpread struct{}

func (evenSpread) Decide(obs *Observation) Decision {
	spot, missing := carryOver(obs)
	for ; missing > 0; missing-- {
		best := 0
		for z := range spot {
			if spot[z] < spot[best] {
				best = z
			}
		}
		spot[best]++
	}
	return Decision{Spot: spot}
}

// roundRobin sends each new launch to the next zone of a fixed cycle, whether or not the last
// launch there failed. The cycle position persists across ticks.
type roundRobin struct{ next int }

func (p *roundRobin) Decide(obs *Observation) Decision {
	spot, missing := carryOver(obs)
	for ; missing > 0; missing-- {
		spot[p.next]++
		p.next = (p.next + 1) % len(spot)
	}
	return Decision{Spot: spot}
}

// carryOver starts a tick from what survived the last one and says how many spot instances are
// missing from N+E. Holding more than N+E (never the case for these baselines) starts over from
// nothing, as the peer's simulator does.
func carryOver(obs *Observation) (spot []int, missing int) {
	want := obs.Rules.Target + obs.Rules.Extra
	spot = make([]int, len(obs.Zones))
	if obs.Tick == 0 {
		return spot, want
	}
	held := 0
	for _, n := range obs.Held[obs.Tick-1] {
		held += n
	}
	if held > want {
		return spot, want
	}
	copy(spot, obs.Held[obs.Tick-1])
	return spot, want - held
}
