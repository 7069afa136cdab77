package jobreplay

// The reference policies of JOBS.md: on-demand only, Greedy and Uniform Progress. Each reads
// the View alone; across several zones they take spot in the zone that runs now, else the zone
// that ran last, else the first zone that has it, so with one zone they are the paper's policies.

func init() {
	Register("od", func(Env) (Policy, error) { return onDemandOnly{}, nil }, false)
	Register("greedy", func(Env) (Policy, error) { return &greedy{}, nil }, false)
	Register("uniform-progress", func(Env) (Policy, error) { return &uniformProgress{}, nil }, false)
}

// onDemandOnly runs on-demand from the first tick to the last.
type onDemandOnly struct{}

func (onDemandOnly) Decide(*View) Choice { return OD }

// greedy takes spot whenever it can and waits otherwise, until waiting any longer could miss
// the deadline (with room for two overheads); from then on it runs on-demand, except that a
// running spot instance that is still there may go on.
type greedy struct{ late bool }

func (p *greedy) Decide(v *View) Choice {
	p.late = p.late || panicking(v)
	if p.late {
		if v.Running.Kind == Spot {
			return v.Running
		}
		return OD
	}
	if z := spotZone(v); z >= 0 {
		return SpotIn(z)
	}
	return Idle
}

// uniformProgress keeps work done on the straight line ep(t) = t·C0/D: spot whenever it is
// there, on-demand only while behind the line (and, once on it, until spot is back and the job
// is ahead of where it must be two overheads later), and on-demand to the end once waiting could
// miss the deadline.
type uniformProgress struct{ late bool }

func (p *uniformProgress) Decide(v *View) Choice {
	if v.Running.Kind != Spot && panicking(v) {
		p.late = true
	}
	if p.late {
		return OD
	}
	z := spotZone(v)
	switch v.Running.Kind {
	case Spot:
		return v.Running
	case OnDemand:
		if z < 0 || behind(v, v.T+2*v.Overhead) {
			return OD
		}
		return SpotIn(z)
	}
	if z >= 0 {
		return SpotIn(z)
	}
	if behind(v, v.T) {
		return OD
	}
	return Idle
}

// panicking is Greedy's and UP's safety net: ceil((C + 2d)/g) ≥ floor(R/g).
func panicking(v *View) bool {
	return ceilDiv(v.Left()+2*v.Overhead, v.Tick) >= floorDiv(v.Slack(), v.Tick)
}

// behind says W < ep(x) = x·C0/D, compared exactly in whole numbers.
func behind(v *View, x int64) bool { return v.Done*v.Deadline < x*v.Work }

// spotZone is where to take spot now: the zone that runs, else the zone that ran last, else the
// first zone that has it; -1 when no zone has spot.
func spotZone(v *View) int {
	for _, c := range []Choice{v.Running, v.Prev} {
		if c.Kind == Spot && v.Spot[c.Zone] {
			return c.Zone
		}
	}
	for z, ok := range v.Spot {
		if ok {
			return z
		}
	}
	return -1
}
