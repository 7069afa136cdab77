package serving

import "fmt"

// Schedule is what a policy held over one window, tick by tick: the simulator's record, which
// the metrics read.
type Schedule struct {
	// Held[t][i], Ready[t][i]: replicas of source i held (launching included) and ready during
	// tick t, after the capacity clamp.
	Held, Ready [][]int
	// Launched[t][i]: replicas that started at tick t on source i and got capacity.
	Launched [][]int
}

// fleet is the simulator's state: per source, the launch tick of every replica it holds, oldest
// first, so that releases and reclaims take from the end (the newest).
type fleet [][]int

// Simulate runs p over w by SERVING.md's "Clock and capacity" (docs/serving.md):
//  1. at tick t the policy sees everything up to the end of t-1 and says what to hold per source;
//  2. counts above what is held launch replicas (launch tick t); counts below release the newest;
//  3. capacity clamp: a spot source holds at most Capacity[t][i]; the newest go first. This one
//     rule is both a launch that gets nothing and a reclaim. The provider's notice (GCP 30 s) is
//     shorter than the 60 s tick, so a reclaimed replica is gone at the tick the capacity drops;
//  4. a replica launched at l is ready at t >= l+ColdStart if it survived every tick between.
//
// Billing and serving are the metrics' business: every held replica is billed, ready ones serve.
// Source.Notice is not modelled: the only capacity trace is GCP's, whose notice is under a tick.
func Simulate(p Policy, w *Window) (Schedule, error) {
	if err := w.validate(); err != nil {
		return Schedule{}, err
	}
	n, T := len(w.Sources), len(w.Demand)
	obs := &Observation{Sources: w.Sources, ColdStart: w.ColdStart}
	s := Schedule{Held: make([][]int, T), Ready: make([][]int, T), Launched: make([][]int, T)}
	f := make(fleet, n)
	for t := range T {
		obs.Tick = t
		obs.Demand = w.Demand[:t]
		obs.Held, obs.Ready, obs.Capacity = s.Held[:t], s.Ready[:t], w.Capacity[:t]
		d := p.Decide(obs)
		if len(d.Held) != n {
			return s, fmt.Errorf("tick %d: policy decided for %d sources, the window has %d", t, len(d.Held), n)
		}
		s.Held[t], s.Ready[t], s.Launched[t] = make([]int, n), make([]int, n), make([]int, n)
		for i := range n {
			if d.Held[i] < 0 {
				return s, fmt.Errorf("tick %d: policy asked for %d replicas of source %d", t, d.Held[i], i)
			}
			f[i] = f.step(i, t, d.Held[i], w.Capacity[t][i])
			s.Held[t][i] = len(f[i])
			for _, l := range f[i] {
				if l == t {
					s.Launched[t][i]++
				}
				if t-l >= w.ColdStart {
					s.Ready[t][i]++
				}
			}
		}
	}
	return s, nil
}

// step applies one source's decision and capacity at tick t and returns its replicas.
func (f fleet) step(i, t, want, capacity int) []int {
	r := f[i]
	if want < len(r) {
		r = r[:want]
	}
	for len(r) < want {
		r = append(r, t)
	}
	if capacity != Unlimited && len(r) > capacity {
		r = r[:capacity]
	}
	return r
}

// validate checks that a window's slices agree, so the simulator never indexes out of range.
func (w *Window) validate() error {
	if len(w.Sources) == 0 {
		return fmt.Errorf("window has no sources")
	}
	if len(w.Capacity) != len(w.Demand) {
		return fmt.Errorf("window has %d ticks of demand but %d of capacity", len(w.Demand), len(w.Capacity))
	}
	if w.ColdStart < 0 {
		return fmt.Errorf("cold start must be >= 0 ticks, got %d", w.ColdStart)
	}
	for t, c := range w.Capacity {
		if len(c) != len(w.Sources) {
			return fmt.Errorf("tick %d: capacity for %d sources, the window has %d", t, len(c), len(w.Sources))
		}
	}
	return nil
}
