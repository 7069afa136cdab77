package anomaly

import (
	"math"
	"time"
)

// Daily is what a once-a-day batch job finds: at 00:00 UTC it looks at the previous day's total
// spend and flags it when it exceeds the median of the 7 days before by more than Z robust
// standard deviations of those days and by at least MinRatio. It knows nothing before the day is
// over, so an anomaly is detected at the midnight after the day it shows in, at the earliest;
// AWS Cost Anomaly Detection, which runs about three times a day, sits between it and a
// streaming detector. Its anomaly spans the flagged day (Start at its midnight).
type Daily struct {
	key     string
	step    time.Duration
	z       float64
	ratio   float64
	day     time.Time
	spent   float64 // $ so far in day
	steps   int
	history window // previous days' totals
	open    *Anomaly
}

var _ Detector = (*Daily)(nil)

// NewDaily is the daily batch detector: robust z of 3 over the last 7 days, and 20 % over their
// median.
func NewDaily(key string, step time.Duration) *Daily {
	return &Daily{key: key, step: step, z: 3, ratio: 1.2, history: window{n: 7}}
}

// Observe takes the next step; at the first step of a new day it judges the day before.
func (d *Daily) Observe(p Point) []Event {
	if math.IsNaN(p.USDPerHour) || math.IsInf(p.USDPerHour, 0) {
		return nil // a gap: the day is then not full, and is not judged
	}
	day := p.At.UTC().Truncate(24 * time.Hour)
	var events []Event
	if !d.day.IsZero() && day.After(d.day) {
		events = d.judge(day)
		d.day, d.spent, d.steps = day, 0, 0
	}
	if d.day.IsZero() {
		d.day = day
	}
	d.spent += p.USDPerHour * d.step.Hours()
	d.steps++
	return events
}

// judge runs the batch job at midnight now over the day that just ended.
func (d *Daily) judge(now time.Time) []Event {
	full := d.steps == int(24*time.Hour/d.step)
	total, prev := d.spent, d.history.last()
	var events []Event
	if full && len(prev) >= 3 {
		m := median(prev)
		spread := madScale * mad(prev, m)
		flagged := total > m+d.z*spread && total > d.ratio*m
		events = d.update(now, flagged, m, total)
	}
	if full {
		d.history.push(total)
	}
	return events
}

// update opens, extends or closes the day-long anomaly; days' totals are turned into $/h.
func (d *Daily) update(now time.Time, flagged bool, median, total float64) []Event {
	exp, obs := median/24, total/24
	switch {
	case flagged && d.open != nil:
		d.open.ExpectedUSDPerHour, d.open.ObservedUSDPerHour = exp, obs
		d.open.ImpactUSD += total - median
		return []Event{{Updated, *d.open}}
	case flagged:
		d.open = &Anomaly{Series: d.key, Start: now.Add(-24 * time.Hour), DetectedAt: now,
			ExpectedUSDPerHour: exp, ObservedUSDPerHour: obs, ImpactUSD: total - median}
		return []Event{{Opened, *d.open}}
	case d.open != nil:
		a := *d.open
		a.End = now.Add(-24 * time.Hour)
		d.open = nil
		return []Event{{Closed, a}}
	}
	return nil
}
