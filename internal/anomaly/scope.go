package anomaly

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Contribution is how one child series of a scope moved at a step.
type Contribution struct {
	Series                                 string
	ExpectedUSDPerHour, ObservedUSDPerHour float64
}

// Delta is the child's spend rate above its baseline (negative below it).
func (c Contribution) Delta() float64 { return c.ObservedUSDPerHour - c.ExpectedUSDPerHour }

// ExplainShare is the part of the scope's rise the listed risers must account for.
const ExplainShare = 0.8

// Explain picks the children that explain a scope's move: the risers, largest first, until they
// account for ExplainShare of the children's total rise, then any child that fell by more than
// half of that rise (a zone that went out sends its spend elsewhere). At most 5 are listed.
func Explain(children []Contribution) []Contribution {
	rise := 0.0
	for _, c := range children {
		rise += math.Max(c.Delta(), 0)
	}
	if rise <= 0 {
		return nil
	}
	sorted := slices.Clone(children)
	slices.SortStableFunc(sorted, func(a, b Contribution) int {
		return cmp.Or(cmp.Compare(b.Delta(), a.Delta()), cmp.Compare(a.Series, b.Series))
	})
	var out []Contribution
	for got := 0.0; len(out) < len(sorted) && got < ExplainShare*rise; {
		c := sorted[len(out)]
		out = append(out, c)
		got += c.Delta()
	}
	for i := len(sorted) - 1; i >= len(out) && sorted[i].Delta() < -rise/2; i-- {
		out = append(out, sorted[i])
	}
	return out[:min(len(out), 5)]
}

// Scope watches a scope (a team, a budget, a workload) through its children: Bursar's detector
// on their total, a baseline per child, and the explanation of every change by the children that
// moved.
type Scope struct {
	total    *Seasonal
	children map[string]*baseline
	step     time.Duration
}

// NewScope watches the scope named key with Bursar's detector.
func NewScope(key string, cfg Config) *Scope {
	return &Scope{total: NewSeasonal(key, cfg), children: map[string]*baseline{}, step: cfg.Step}
}

// Observe takes one step of every child (key → $/h; a child missing at a step spent nothing) and
// returns the changes of the scope's anomaly, explained.
func (s *Scope) Observe(at time.Time, children map[string]float64) []Event {
	keys := make([]string, 0, len(children)+len(s.children))
	for k := range children {
		keys = append(keys, k)
	}
	for k := range s.children {
		if _, ok := children[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // the total is summed in one order, so it is the same on every run
	total := 0.0
	contrib := make([]Contribution, 0, len(keys))
	for _, k := range keys {
		b, ok := s.children[k]
		if !ok {
			nb := newBaseline(s.step)
			b = &nb
			s.children[k] = b
		}
		v := children[k]
		total += v
		exp := b.expected()
		if math.IsNaN(exp) {
			exp = v
		}
		contrib = append(contrib, Contribution{Series: k, ExpectedUSDPerHour: exp, ObservedUSDPerHour: v})
	}
	events := s.total.Observe(Point{At: at, USDPerHour: total})
	held := s.total.open != nil || s.total.over > 0
	for _, c := range contrib {
		v := c.ObservedUSDPerHour
		if held {
			v = c.ExpectedUSDPerHour // as the total: the anomaly stays out of the baselines
		}
		s.children[c.Series].push(v)
	}
	why := Explain(contrib)
	for i := range events {
		events[i].Anomaly.Explanation = why
	}
	return events
}
