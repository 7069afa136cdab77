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

// model is the fitted forecaster at one origin. The profile of the hour at hour-of-day h on
// weekday d is hod[h] × dow[d] (each of mean 1; dow all 1 for the daily model), kept with their
// running sums so that the profile over any stretch is a few additions, not one per hour: a
// backtest fits the model at every hour of the history.
type model struct {
	weekly bool
	off    int                        // hour of the week of hour 0
	hod    [day]float64               // hour-of-day profile, mean 1
	hodCum [day + 1]float64           // hodCum[h] = hod[0] + … + hod[h-1]
	dow    [7]float64                 // day-of-week profile, mean 1
	dowCum [8]float64                 // dowCum[d] = dow[0] + … + dow[d-1]
	levels [len(levelWindows)]float64 // amount per hour at profile 1, by level window
}

// fit fits the model on the whole hours before origin o (o ≥ minTrainHours): the hour-of-day
// profile on the last maxDays days (maxWeeks weeks once there are two), the day-of-week profile
// on the last maxWeeks weeks from two weeks of history on.
func (s *series) fit(o int) model {
	m := model{off: s.off, weekly: o >= weeklyFrom}
	cycle, k, by := day, min(maxDays, o/day), s.byDay
	if m.weekly {
		cycle, k, by = week, min(maxWeeks, o/week), s.byWeek
	}
	span := k * cycle
	var hod [day]float64
	var dow [7]float64
	total := 0.0
	for j := o - cycle; j < o; j++ {
		x := by[j] // the k hours of j's slot in the span: j, j-cycle, …, j-span+cycle
		if j-span >= 0 {
			x -= by[j-span]
		}
		slot := (s.off + j) % week
		hod[slot%day] += x
		dow[slot/day] += x
		total += x
	}
	m.setProfile(hod, dow, total)
	for w, hours := range levelWindows {
		m.levels[w] = s.levelAt(&m, o, min(hours, o), total/float64(span))
	}
	return m
}

// setProfile turns the sums by hour of day and by weekday into profiles of mean 1. A stretch
// that spent nothing has flat ones; so has the week of the daily model.
func (m *model) setProfile(hod [day]float64, dow [7]float64, total float64) {
	for h := range m.hod {
		m.hod[h] = 1
		if total > 0 {
			m.hod[h] = hod[h] / (total / day)
		}
		m.hodCum[h+1] = m.hodCum[h] + m.hod[h]
	}
	for d := range m.dow {
		m.dow[d] = 1
		if total > 0 && m.weekly {
			m.dow[d] = dow[d] / (total / 7)
		}
		m.dowCum[d+1] = m.dowCum[d] + m.dow[d]
	}
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

// idxTo is the profile summed from the start of the week holding the history's start to x
// hours after the history's start: whole weeks (168 each), whole days of the last week
// (24 × dow), and the hours of the last day (dow × hod).
func (m *model) idxTo(x float64) float64 {
	y := x + float64(m.off)
	weeks := math.Floor(y / week)
	r := y - weeks*week
	d := min(int(r/day), 6)
	hr := r - float64(d*day)
	h := min(int(hr), day-1)
	return weeks*week + day*m.dowCum[d] + m.dow[d]*(m.hodCum[h]+(hr-float64(h))*m.hod[h])
}

// total is the amount expected over [a, b) in hours from the history's start, with level
// window w.
func (m *model) total(w int, a, b float64) float64 {
	if b <= a {
		return 0
	}
	return m.levels[w] * m.idxBetween(a, b)
}
