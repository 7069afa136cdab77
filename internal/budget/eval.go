package budget

import (
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/forecast"
)

// Bounds returns the calendar period holding t, in UTC: [start, end).
func Bounds(p Period, t time.Time) (start, end time.Time) {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch p {
	case Week:
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		start = day.AddDate(0, 0, -back)
		return start, start.AddDate(0, 0, 7)
	case Month:
		start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	default:
		return day, day.AddDate(0, 0, 1)
	}
}

// Interval is a stretch of time during which Count replicas of a workload ran on one offer at one
// price. Cost is exact: the price times the time, summed over intervals.
type Interval struct {
	Workload   string
	Team       string
	Provider   string
	Location   string
	Market     string  // spot, on_demand or reserved, for the spend gauges
	Count      int     // replicas running; 0 means 1
	USDPerHour float64 // price of one replica-hour
	From       time.Time
	To         time.Time // zero: still running
}

func (iv Interval) count() float64 {
	if iv.Count <= 0 {
		return 1
	}
	return float64(iv.Count)
}

// Cost is what the interval cost between from and to.
func (iv Interval) Cost(from, to time.Time) float64 {
	lo, hi := iv.From, iv.To
	if hi.IsZero() || hi.After(to) {
		hi = to
	}
	if lo.Before(from) {
		lo = from
	}
	if !hi.After(lo) {
		return 0
	}
	return hi.Sub(lo).Hours() * iv.USDPerHour * iv.count()
}

// runningAt reports whether the interval holds capacity at t.
func (iv Interval) runningAt(t time.Time) bool {
	return !iv.From.After(t) && (iv.To.IsZero() || iv.To.After(t))
}

// Spend is one policy's position in its current period.
type Spend struct {
	PeriodStart time.Time
	PeriodEnd   time.Time
	Actual      float64 // spent from the period's start to now
	BurnPerHour float64 // what the scope's running replicas cost per hour now
	// Forecast is Actual plus what the scope is expected to spend until the period ends
	// (internal/forecast, from the hourly spend of the intervals given); with under four days of
	// them, Linear.
	Forecast float64
	Low      float64 // the forecast's 80 % interval (with too short a history: the range seen)
	High     float64
	Linear   float64 // Actual plus the burn rate until the period ends
	Model    string  // which forecast gave Forecast: forecast.Weekly, Daily or BurnRate
}

// Of returns the spend on the threshold's basis.
func (s Spend) Of(b Basis) float64 {
	if b == Forecast {
		return s.Forecast
	}
	return s.Actual
}

// Measure computes the policy's spend at now from the intervals given: the exact cost of every
// interval in scope since the period started, the burn-rate forecast that the replicas running
// now keep running at their price until the period ends, and the seasonal forecast of
// internal/forecast from the hourly spend of the intervals in scope (as far back as they go, at
// most historyLimit). The arbiter's ledger keeps the intervals of the periods it evaluates.
func Measure(p Policy, ivs []Interval, now time.Time) Spend {
	start, end := Bounds(p.Period, now)
	s := Spend{PeriodStart: start, PeriodEnd: end}
	for _, iv := range ivs {
		if !p.Scope.Matches(iv.Workload, iv.Team, iv.Provider, iv.Location) {
			continue
		}
		s.Actual += iv.Cost(start, now)
		if iv.runningAt(now) {
			s.BurnPerHour += iv.USDPerHour * iv.count()
		}
	}
	s.Linear = s.Actual + s.BurnPerHour*end.Sub(now).Hours()
	s.Forecast, s.Low, s.High, s.Model = s.Linear, s.Linear, s.Linear, forecast.BurnRate
	f, err := forecast.Sum(scopeHistory(p.Scope, ivs, now), forecast.Period{Start: start, End: end, Now: now})
	if err != nil {
		return s // only a history built wrong errs: the burn rate stands
	}
	if f.Model != forecast.BurnRate { // under forecast.MinHistoryHours, the exact burn rate stands
		s.Forecast, s.Model = s.Actual+f.Expected-f.Spent, f.Model
	}
	s.Low, s.High = s.Actual+f.Low-f.Spent, s.Actual+f.High-f.Spent
	return s
}

// historyLimit is how far back the forecast reads the intervals: twelve weeks give a month-end
// forecast enough backtest origins.
const historyLimit = 12 * 7 * 24 * time.Hour

// scopeHistory is the hourly spend of the intervals in scope, from the hour the earliest began
// (no earlier than historyLimit before now) to now.
func scopeHistory(sc Scope, ivs []Interval, now time.Time) forecast.History {
	from := now
	for _, iv := range ivs {
		if iv.From.Before(from) && sc.Matches(iv.Workload, iv.Team, iv.Provider, iv.Location) {
			from = iv.From
		}
	}
	from = later(from, now.Add(-historyLimit)).UTC().Truncate(time.Hour)
	h := forecast.History{Start: from, Values: make([]float64, forecast.Hours(from, now))}
	for _, iv := range ivs {
		if !sc.Matches(iv.Workload, iv.Team, iv.Provider, iv.Location) {
			continue
		}
		to := now
		if !iv.To.IsZero() && iv.To.Before(now) {
			to = iv.To
		}
		first := max(0, int(iv.From.Sub(from)/time.Hour))
		for i := first; i < len(h.Values) && from.Add(time.Duration(i)*time.Hour).Before(to); i++ {
			a := from.Add(time.Duration(i) * time.Hour)
			h.Values[i] += iv.Cost(a, earlier(a.Add(time.Hour), now))
		}
	}
	return h
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// lineState is what the Tracker remembers of one threshold line in one period.
type lineState struct {
	period  time.Time
	active  bool // spend is at or above the line
	crossed bool // the crossing was announced this period
	cleared bool // the fall back was announced this period
}

// Tracker remembers which threshold lines are crossed and which alerts were sent, so that each
// line announces its crossing at most once per period, and its fall back at most once, however
// often spend wobbles around it. It is a value the arbiter owns; it does no I/O.
type Tracker struct {
	lines map[string]*lineState
}

// Reached lists the thresholds of p whose line spend is at or above now.
func Reached(p Policy, s Spend) []Threshold {
	var out []Threshold
	for _, t := range p.Thresholds {
		if s.Of(t.On) >= t.At.Amount(p.Limit) {
			out = append(out, t)
		}
	}
	return out
}

// Step moves the tracker to the policy's spend at now and returns the alerts to publish: a line
// crossed for the first time this period, or a crossed line that spend fell back below. A new
// period starts every line afresh.
func (tr *Tracker) Step(p Policy, s Spend, now time.Time) []*events.BudgetAlert {
	if tr.lines == nil {
		tr.lines = map[string]*lineState{}
	}
	var out []*events.BudgetAlert
	done := map[string]bool{}
	for _, t := range p.Thresholds {
		key := t.Key()
		if done[key] {
			continue // thresholds sharing a line (different actions) alert once
		}
		done[key] = true
		st := tr.line(p.Name, key, s.PeriodStart)
		spend := s.Of(t.On)
		reached := spend >= t.At.Amount(p.Limit)
		switch {
		case reached && !st.active:
			st.active = true
			if !st.crossed {
				st.crossed = true
				out = append(out, alert(p, t, s, spend, now, false))
			}
		case !reached && st.active:
			st.active = false
			if !st.cleared {
				st.cleared = true
				out = append(out, alert(p, t, s, spend, now, true))
			}
		}
	}
	return out
}

func (tr *Tracker) line(policy, key string, period time.Time) *lineState {
	k := policy + "\x00" + key
	st := tr.lines[k]
	if st == nil || !st.period.Equal(period) {
		st = &lineState{period: period}
		tr.lines[k] = st
	}
	return st
}

// Restore replays alerts already published (read back from the FLEET stream at start-up), so a
// restarted arbiter does not announce a crossing twice in one period.
func (tr *Tracker) Restore(alerts []*events.BudgetAlert) {
	if tr.lines == nil {
		tr.lines = map[string]*lineState{}
	}
	for _, a := range alerts {
		st := tr.line(a.Policy, a.Basis+":"+a.Threshold, a.PeriodStart)
		if a.Cleared {
			st.cleared, st.active = true, false
		} else {
			st.crossed, st.active = true, true
		}
	}
}

// Forget drops what the tracker holds for a policy that no longer exists.
func (tr *Tracker) Forget(policy string) {
	for k := range tr.lines {
		if len(k) > len(policy) && k[:len(policy)] == policy && k[len(policy)] == 0 {
			delete(tr.lines, k)
		}
	}
}

func alert(p Policy, t Threshold, s Spend, spend float64, now time.Time, cleared bool) *events.BudgetAlert {
	a := &events.BudgetAlert{Meta: events.Meta{At: now.UTC()}, Policy: p.Name, Scope: p.Scope.String(),
		Period: string(p.Period), PeriodStart: s.PeriodStart, Basis: string(t.On), Threshold: t.At.String(),
		Spend: spend, Limit: p.Limit, Currency: p.Currency, Cleared: cleared}
	events.Stamp(a)
	return a
}
