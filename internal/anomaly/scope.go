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
// account for ExplainShare of the children's total rise, then any child that fell by more than a
// fifth of that rise (a zone that went out sends its spend elsewhere, at up to 5× the price). At
// most 5 are listed.
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
	for i := len(sorted) - 1; i >= len(out) && sorted[i].Delta() < -rise/5; i-- {
		out = append(out, sorted[i])
	}
	return out[:min(len(out), 5)]
}

// Child is one child series' step: its spend rate and the GPUs it held.
type Child struct {
	USDPerHour, GPUs float64
}

// UnitPriceSuffix ends the series key of a scope's unit-price anomalies.
const UnitPriceSuffix = "#usd-per-gpu-hour"

// Scope watches a scope (a team, a budget, a workload) through its children: Bursar's detector
// on their total spend and on its unit price ($ per GPU-hour, whose moves show a price spike or
// spend moved to dearer markets even while demand moves the total), a baseline per child, and
// the explanation of every change by the children that moved.
type Scope struct {
	total, price *Seasonal
	lastPrice    float64
	// priceShown says whether the open unit-price anomaly was alerted: only one that raised
	// the total spend is (a cheaper market emptied by lower demand raises the unit price only).
	priceShown bool
	// prices are the last week's unit prices outside anomalies: a unit-price anomaly must go
	// above all of them (a spot fleet's fallbacks reach the on-demand price every week).
	prices   window
	children map[string]*child
	// why is each open anomaly's explanation, by series key.
	why   map[string][]Contribution
	step  time.Duration
	steps int // Observe calls so far: the scope's history
}

// child is one child series' baseline. late says it first showed in a scope that already had
// history: before that it spent nothing there.
type child struct {
	base baseline
	late bool
}

// expected is the child's baseline for a step spending v. Under an hour of its own history it
// has none: a late child then expects 0 (all it spends is new, and it explains the rise it
// makes: an on-demand fallback to a market the workload never used); one there from the
// scope's first step expects what it spends (the scope has no baseline either).
func (c *child) expected(v float64) float64 {
	exp := c.base.expected()
	switch {
	case !math.IsNaN(exp):
		return exp
	case c.late:
		return 0
	}
	return v
}

// NewScope watches the scope named key with Bursar's detector. Its unit-price anomalies carry
// the series key key+UnitPriceSuffix.
func NewScope(key string, cfg Config) *Scope {
	price := cfg
	price.MinUSDPerHour = 0 // a unit price is no spend: the ratio and the spread decide
	price.MinRatio = cfg.UnitPriceRatio
	return &Scope{total: NewSeasonal(key, cfg), price: NewSeasonal(key+UnitPriceSuffix, price),
		children: map[string]*child{}, why: map[string][]Contribution{}, step: cfg.Step, prices: window{n: int(7 * 24 * time.Hour / cfg.Step)}}
}

// Observe takes one step of every child (a child missing at a step spent nothing) and returns
// the changes of the scope's anomalies, explained.
func (s *Scope) Observe(at time.Time, children map[string]Child) []Event {
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
	total, gpus := 0.0, 0.0
	contrib := make([]Contribution, 0, len(keys))
	for _, k := range keys {
		c, ok := s.children[k]
		if !ok {
			c = &child{base: newBaseline(s.step), late: s.steps > 0}
			s.children[k] = c
		}
		v := children[k].USDPerHour
		total += v
		gpus += children[k].GPUs
		contrib = append(contrib, Contribution{Series: k, ExpectedUSDPerHour: c.expected(v), ObservedUSDPerHour: v})
	}
	s.steps++
	totalExp := s.total.Expected()
	events := s.total.Observe(Point{At: at, USDPerHour: total})
	if gpus > 0 {
		s.lastPrice = total / gpus
	}
	events = append(events, s.gatePrice(s.price.Observe(Point{At: at, USDPerHour: s.lastPrice}), total, totalExp)...)
	if s.price.open == nil && s.price.over == 0 {
		s.prices.push(s.lastPrice)
	}
	held := s.total.open != nil || s.total.over > 0 || s.price.open != nil || s.price.over > 0
	for _, c := range contrib {
		v := c.ObservedUSDPerHour
		if held {
			v = c.ExpectedUSDPerHour // as the total: the anomaly stays out of the baselines
		}
		s.children[c.Series].base.push(v)
	}
	why := Explain(contrib)
	for i := range events {
		a := &events[i].Anomaly
		if s.why[a.Series] == nil || events[i].Change != Closed && s.detector(a.Series).calm == 0 {
			s.why[a.Series] = why // the last step still over the threshold explains it best
		}
		a.Explanation = s.why[a.Series]
		if events[i].Change == Closed {
			delete(s.why, a.Series)
		}
	}
	return events
}

// detector is the scope's detector whose anomalies carry series key.
func (s *Scope) detector(key string) *Seasonal {
	if key == s.price.key {
		return s.price
	}
	return s.total
}

// gatePrice keeps the unit-price events of an anomaly that opened while the total spend was
// above its baseline by the spend detector's MinRatio.
func (s *Scope) gatePrice(events []Event, total, totalExp float64) []Event {
	var out []Event
	for _, e := range events {
		if e.Change == Opened {
			s.priceShown = !math.IsNaN(totalExp) && total >= s.total.cfg.MinRatio*totalExp &&
				(len(s.prices.values) == 0 || e.Anomaly.ObservedUSDPerHour > slices.Max(s.prices.last()))
		}
		if s.priceShown {
			out = append(out, e)
		}
	}
	return out
}
