package forecast

import (
	"math"
	"time"
)

// The model: the amount expected in hour i is level × index[slot(i)], where index is the
// hour-of-day profile (daily) or the hour-of-day profile times the day-of-week profile (weekly),
// each with mean 1, fitted on the most recent whole cycles, and level is the amount per hour of
// a recent stretch (one of levelWindows), divided by the profile over those hours (so a quiet
// night does not read as a fall in spend). The product of two small profiles (24 + 7 numbers)
// rather than 168 free ones keeps the weekly shape steady on three or four weeks of history.
const (
	day  = 24
	week = 7 * day
	// weeklyFrom is the history (hours) from which the day-of-week profile is fitted: two weeks,
	// so each weekday is seen twice.
	weeklyFrom = 2 * week
	// maxWeeks and maxDays bound how much history the profiles are fitted on, so they follow a
	// change in shape within a month.
	maxWeeks = 4
	maxDays  = 7
)

// levelWindows are the stretches (hours) the level may be read from: a day follows a change in
// what runs within a day; one and two weeks average out more of a spot market's noise but follow
// a change slowly. Each forecast uses the one with the least backtested error on its own
// history (backtest.go), so a steady scope gets a steady level and a changing one a quick one.
var levelWindows = [...]int{day, week, 2 * week}

// series is one quantity's history, with the sums that make fitting at any origin O(cycle).
type series struct {
	v       []float64 // hourly values; the last may be a partial hour
	whole   int       // whole hours before now
	off     int       // hour of the week of v[0], Monday 00:00 UTC = 0
	cum     []float64 // cum[i] = v[0] + … + v[i-1]
	byDay   []float64 // byDay[i] = v[i] + v[i-24] + v[i-48] + …
	byWeek  []float64 // byWeek[i] = v[i] + v[i-168] + …
	nowX    float64   // now, in hours from the history's start
	endX    float64   // the period's end, in hours from the history's start
	startIx int       // the period's start, in hours from the history's start (may be < 0)
}

func newSeries(h History, p Period) (*series, error) {
	if err := checkInput(h, p); err != nil {
		return nil, err
	}
	start := h.Start.UTC()
	s := &series{v: h.Values, whole: int(p.Now.Sub(start) / time.Hour),
		off:     (int(start.Weekday())+6)%7*day + start.Hour(),
		nowX:    p.Now.Sub(start).Hours(),
		endX:    p.End.Sub(start).Hours(),
		startIx: int(p.Start.Sub(start) / time.Hour)}
	s.cum = make([]float64, len(s.v)+1)
	s.byDay, s.byWeek = make([]float64, len(s.v)), make([]float64, len(s.v))
	for i, x := range s.v {
		s.cum[i+1] = s.cum[i] + x
		s.byDay[i], s.byWeek[i] = x, x
		if i >= day {
			s.byDay[i] += s.byDay[i-day]
		}
		if i >= week {
			s.byWeek[i] += s.byWeek[i-week]
		}
	}
	return s, nil
}

// spent is the amount from the period's start to now.
func (s *series) spent() float64 { return s.cum[len(s.v)] - s.cum[max(s.startIx, 0)] }

// rate is the latest whole hour's amount: what the burn-rate forecast carries to the end.
func (s *series) rate(o int) float64 {
	if o <= 0 {
		return 0
	}
	return s.v[o-1]
}

// model is the fitted forecaster at one origin.
type model struct {
	cycle  int                        // 24 or 168
	off    int                        // slot of hour 0
	index  []float64                  // profile by slot, mean 1
	cumIdx []float64                  // cumIdx[k] = index[0] + … + index[k-1]
	levels [len(levelWindows)]float64 // amount per hour at profile 1, by level window
}

// fit fits the model on the whole hours before origin o (o ≥ minTrainHours).
func (s *series) fit(o int) *model {
	m := &model{cycle: day, off: s.off % day}
	k, by := min(maxDays, o/day), s.byDay
	if o >= weeklyFrom {
		m.cycle, m.off, k, by = week, s.off, min(maxWeeks, o/week), s.byWeek
	}
	span := k * m.cycle
	sums := make([]float64, m.cycle) // by slot, over the last span hours
	total := 0.0
	for j := o - m.cycle; j < o; j++ {
		x := by[j] // the k hours of j's slot in the span: j, j-cycle, …, j-span+cycle
		if j-span >= 0 {
			x -= by[j-span]
		}
		sums[(m.off+j)%m.cycle] = x
		total += x
	}
	m.index = profile(sums, total, m.cycle)
	m.cumIdx = make([]float64, m.cycle+1)
	for j, x := range m.index {
		m.cumIdx[j+1] = m.cumIdx[j] + x
	}
	for w, hours := range levelWindows {
		m.levels[w] = s.levelAt(m, o, min(hours, o), total/float64(span))
	}
	return m
}

// profile turns sums by slot into an index with mean 1: for a week, the product of the
// hour-of-day and the day-of-week profiles. A cycle that spent nothing has a flat profile.
func profile(sums []float64, total float64, cycle int) []float64 {
	idx := make([]float64, cycle)
	if total <= 0 {
		for j := range idx {
			idx[j] = 1
		}
		return idx
	}
	mean := total / float64(cycle)
	if cycle == day {
		for j, x := range sums {
			idx[j] = x / mean
		}
		return idx
	}
	var hod [day]float64
	var dow [7]float64
	for j, x := range sums {
		hod[j%day] += x / 7
		dow[j/day] += x / day
	}
	for j := range idx {
		idx[j] = hod[j%day] / mean * (dow[j/day] / mean) // not /mean²: that underflows on tiny amounts
	}
	return idx
}

// levelAt is the amount per hour at profile 1 over the hours before o. Where the profile says
// those hours are normally quiet (a weekend night) the fitted cycles' mean is used, since a
// near-zero profile would make a small amount look like a large level.
func (s *series) levelAt(m *model, o, hours int, cycleMean float64) float64 {
	w := m.idxBetween(float64(o-hours), float64(o))
	if w < float64(hours)/4 {
		return cycleMean
	}
	return (s.cum[o] - s.cum[o-hours]) / w
}

// idxBetween is the profile summed over [a, b) in hours from the history's start.
func (m *model) idxBetween(a, b float64) float64 { return m.idxTo(b) - m.idxTo(a) }

func (m *model) idxTo(x float64) float64 {
	y := x + float64(m.off)
	c := float64(m.cycle)
	n := math.Floor(y / c)
	r := y - n*c
	j := min(int(r), m.cycle-1)
	return n*m.cumIdx[m.cycle] + m.cumIdx[j] + (r-float64(j))*m.index[j]
}

// total is the amount expected over [a, b) in hours from the history's start, with level
// window w.
func (m *model) total(w int, a, b float64) float64 {
	if b <= a {
		return 0
	}
	return m.levels[w] * m.idxBetween(a, b)
}
