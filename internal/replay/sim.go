package replay

import (
	"fmt"
	"time"
)

// Rules are the fixed parameters of one replay, shared by every policy compared.
type Rules struct {
	// Target is how many replicas must be ready (N).
	Target int
	// Extra is the spare spot replicas the baselines keep (E); SpotHedge keeps Target+Extra.
	Extra int
	// ColdStart is D: an instance is ready after surviving D ticks after its launch tick.
	ColdStart int
	// Window is T, the ticks in one window.
	Window int
	// ODRatio is the price of one on-demand instance in units of one spot instance.
	ODRatio float64
	// Tick is the length of one tick, for policies that reason in time (the planner); the
	// replay itself counts ticks. Zero means 30 s.
	Tick time.Duration
}

// TickLength is the tick as a duration, 30 s when unset.
func (r Rules) TickLength() time.Duration {
	if r.Tick <= 0 {
		return 30 * time.Second
	}
	return r.Tick
}

func (r Rules) validate() error {
	switch {
	case r.Target < 1:
		return fmt.Errorf("target must be at least 1, got %d", r.Target)
	case r.Extra < 0:
		return fmt.Errorf("extra must not be negative, got %d", r.Extra)
	case r.ColdStart < 0:
		return fmt.Errorf("cold start must not be negative, got %d ticks", r.ColdStart)
	case r.Window <= r.ColdStart:
		return fmt.Errorf("window of %d ticks must be longer than the %d-tick cold start", r.Window, r.ColdStart)
	case !(r.ODRatio > 0):
		return fmt.Errorf("on-demand price ratio must be positive, got %v", r.ODRatio)
	}
	return nil
}

// Decision is what a policy holds during one tick: spot instances per zone (in the trace's zone
// order) and on-demand instances. Counts above what is held launch new instances; counts below
// it release instances (the newest first, as the capacity clamp does).
type Decision struct {
	Spot     []int
	OnDemand int
}

// Observation is what a policy knows when it decides tick Tick: everything up to the end of tick
// Tick-1 and nothing later. Its slices are the replay's own history: read them, never write.
type Observation struct {
	// Tick is the tick being decided, counted from the window's start.
	Tick int
	// Zones names the zones, in the order of Decision.Spot.
	Zones []string
	// Held[s][z] is the spot count in zone z after the capacity clamp of tick s, for s < Tick.
	Held [][]int
	// Asked[s][z] is what the policy asked for in zone z at tick s, for s < Tick.
	Asked [][]int
	// OnDemand[s] is the on-demand count held at tick s, for s < Tick.
	OnDemand []int
	// Past[s][z] is zone z's capacity during the ticks before the window (oldest first): the market
	// history a collector would have recorded before the replay started.
	Past [][]int
	// Rules are the replay's rules (target, cold start, ...).
	Rules Rules
}

// ReadySpot is the number of ready spot instances at tick s < Tick, over all zones.
func (o *Observation) ReadySpot(s int) int {
	n := 0
	for z := range o.Zones {
		n += o.ReadySpotIn(s, z)
	}
	return n
}

// ReadySpotIn is the number of ready spot instances in zone z at tick s < Tick: the minimum of
// the zone's counts over ticks s-D..s, and none before D.
func (o *Observation) ReadySpotIn(s, z int) int {
	return readyAt(s, o.Rules.ColdStart, func(u int) int { return o.Held[u][z] })
}

// ReadyOnDemand is the number of ready on-demand instances at tick s < Tick.
func (o *Observation) ReadyOnDemand(s int) int {
	return readyAt(s, o.Rules.ColdStart, func(u int) int { return o.OnDemand[u] })
}

// readyAt applies the readiness rule to a count series: min of count(s-d..s), 0 before d.
func readyAt(s, d int, count func(int) int) int {
	if s < d || s < 0 {
		return 0
	}
	m := count(s)
	for u := s - d; u < s && m > 0; u++ {
		m = min(m, count(u))
	}
	return m
}

// Schedule is one window's history: what was asked for and held at every tick.
type Schedule struct {
	Asked    [][]int
	Held     [][]int
	OnDemand []int
}

// Score is one window's outcome under the replay's metrics.
type Score struct {
	// AvailableTicks counts ticks D..T-1 with at least Target ready replicas.
	AvailableTicks int
	// Cost is Σ over ticks D..T-1 of spot held + ODRatio × on-demand held, in spot units.
	Cost float64
	// WindowCost is the same sum over the whole window, ticks 0..T-1 (what Optimal minimizes).
	WindowCost float64
	// AvailabilityPct and CostPct are the reported figures: share of scored ticks available, and
	// Cost as a percentage of holding Target on-demand instances for every scored tick.
	AvailabilityPct float64
	CostPct         float64
}

// simulate runs one policy over one window. capacity[t][z] is zone z's capacity at window tick t;
// past is the market history before the window.
func simulate(p Policy, rules Rules, zones []string, capacity, past [][]int) (Schedule, error) {
	s := Schedule{
		Asked:    make([][]int, 0, rules.Window),
		Held:     make([][]int, 0, rules.Window),
		OnDemand: make([]int, 0, rules.Window),
	}
	obs := Observation{Zones: zones, Past: past, Rules: rules}
	for t := range rules.Window {
		obs.Tick, obs.Held, obs.Asked, obs.OnDemand = t, s.Held, s.Asked, s.OnDemand
		d := p.Decide(&obs)
		if len(d.Spot) != len(zones) {
			return Schedule{}, fmt.Errorf("tick %d: policy decided %d spot counts for %d zones", t, len(d.Spot), len(zones))
		}
		if d.OnDemand < 0 {
			return Schedule{}, fmt.Errorf("tick %d: policy decided %d on-demand instances", t, d.OnDemand)
		}
		asked := make([]int, len(zones))
		held := make([]int, len(zones))
		for z, n := range d.Spot {
			if n < 0 {
				return Schedule{}, fmt.Errorf("tick %d: policy decided %d spot instances in zone %s", t, n, zones[z])
			}
			asked[z] = n
			held[z] = min(n, capacity[t][z])
		}
		s.Asked = append(s.Asked, asked)
		s.Held = append(s.Held, held)
		s.OnDemand = append(s.OnDemand, d.OnDemand)
	}
	return s, nil
}

// score applies the metrics of REPLAY.md to a window's schedule.
func score(s Schedule, rules Rules) Score {
	var sc Score
	d := rules.ColdStart
	for t := range len(s.Held) {
		cost := rules.ODRatio * float64(s.OnDemand[t])
		for _, n := range s.Held[t] {
			cost += float64(n)
		}
		sc.WindowCost += cost
		if t < d {
			continue
		}
		sc.Cost += cost
		ready := readyAt(t, d, func(u int) int { return s.OnDemand[u] })
		for z := range s.Held[t] {
			ready += readyAt(t, d, func(u int) int { return s.Held[u][z] })
		}
		if ready >= rules.Target {
			sc.AvailableTicks++
		}
	}
	scored := float64(len(s.Held) - d)
	sc.AvailabilityPct = 100 * float64(sc.AvailableTicks) / scored
	sc.CostPct = 100 * sc.Cost / (float64(rules.Target) * rules.ODRatio * scored)
	return sc
}
