package costseries

import "time"

// group is one replica group of a replay as the arbiter reports it (events.ReplicaState): what
// one replica costs and holds, and how many replicas the replay held at each tick (launching
// ones included: the replays bill them).
type group struct {
	key      Key
	provider string
	offer    string
	usd      float64 // one replica's $/h
	gpus     int     // GPUs per replica
	held     []int   // per tick
	// tokens are the output tokens the group served at each tick; nil where the replay serves
	// none. replica.state does not carry them, so the recorded series take them from here.
	tokens []float64
}

// spends says whether the group ever held a priced replica: a market a policy never used is not
// a series, and the arbiter reports no group for it.
func (g *group) spends() bool {
	for _, n := range g.held {
		if n > 0 && g.usd > 0 {
			return true
		}
	}
	return false
}

// run is one replay's groups, every one with a value per tick.
type run struct {
	tick   time.Duration
	groups []group
}

// series sums each group's held replicas into steps; held[g] is group g's replicas per tick,
// the replay's own (run.held) or as read back from the history. Groups that never spent are
// left out.
func (r run) series(held [][]int) ([]Series, error) {
	per, err := ticksPerStep(r.tick)
	if err != nil {
		return nil, err
	}
	var out []Series
	for i := range r.groups {
		g := &r.groups[i]
		a := newAccumulator(g.key, len(held[i]), per, g.tokens != nil)
		for t, n := range held[i] {
			tokens := 0.0
			if g.tokens != nil {
				tokens = g.tokens[t]
			}
			a.add(t, float64(n)*g.usd, float64(n*g.gpus), tokens)
		}
		if a.anySpend {
			out = append(out, a.series())
		}
	}
	return out, nil
}

// held is the replay's own replicas per tick of every group.
func (r run) held() [][]int {
	out := make([][]int, len(r.groups))
	for i := range r.groups {
		out[i] = r.groups[i].held
	}
	return out
}
