package serving

func init() {
	register("melange", func(env Env) (Policy, error) { return NewMelange(env.Sources), nil }, false)
	register("optimal", func(env Env) (Policy, error) { return NewOptimal(*env.Window), nil }, true)
}

// Bounded is a policy that knows how far its schedule may be from the cheapest one: optimal,
// which solves full windows only approximately. Cost is its schedule's cost and Bound a lower
// bound on the optimum's (exact when the schedule is proven optimal), both over the whole window
// as it bills them.
type Bounded interface {
	Cost() float64
	Bound() (usd float64, exact bool)
}

// gapPct is how much dearer than the lower bound a bounded policy's schedule is, in percent of
// the schedule: 0 when it is proven optimal.
func gapPct(b Bounded) float64 {
	bound, exact := b.Bound()
	if exact || b.Cost() <= 0 {
		return 0
	}
	return pct(b.Cost()-bound, b.Cost())
}
