package anomaly

import (
	"math"
	"slices"
	"time"
)

// Scores are one detector's figures on a benchmark.
type Scores struct {
	Injected, Detected  int
	Ineffective         int // injections that moved the scope's spend by under MinEffect: not scored
	Alerts, FalseAlerts int
	MedianDetectMin     float64
	P95DetectMin        float64
	PrecisionPct        float64
	RecallPct           float64
	Recall2x15Pct       float64 // recall of the injections of ≥ 2× (on the scope) lasting ≥ 15 minutes
	FalsePer100Weeks    float64
	SeriesWeeks         float64
	big, bigDetected    int
	detectMins          []float64
}

// MinEffect is the least change of the scope's spend over an injection's span for it to count:
// a price spike on a zone that held nothing at the time is no cost anomaly.
const MinEffect = 1.1

// Effect is how much an injection multiplied the scope's spend over its span: the injected
// total's sum over the clean one's.
func Effect(clean, injected []Point, j Injection) float64 {
	var c, x float64
	for i, p := range clean {
		if !p.At.Before(j.Start) && p.At.Before(j.End()) {
			c += p.USDPerHour
			x += injected[i].USDPerHour
		}
	}
	if c == 0 {
		if x == 0 {
			return 1 // nothing spent either way: no effect
		}
		return math.Inf(1)
	}
	return x / c
}

// Tally adds one series' outcome: what was injected into it, each injection's Effect, what the
// detector raised on it, and how long the series is. An alert is true when it overlaps an
// injection; an injection is detected by the first alert that overlaps it, after the injection
// started, and its time-to-detect is from the injection's start to that alert's DetectedAt.
// Injections under MinEffect are not scored (alerts overlapping them are still true); the
// "≥ 2× for ≥ 15 minutes" recall counts the injections whose Effect on the scope is ≥ 2.
func (s *Scores) Tally(injected []Injection, effects []float64, alerts []Anomaly, end time.Time, weeks float64) {
	s.SeriesWeeks += weeks
	s.Alerts += len(alerts)
	for _, a := range alerts {
		if !slices.ContainsFunc(injected, func(j Injection) bool { return overlaps(a, j, end) }) {
			s.FalseAlerts++
		}
	}
	for k, j := range injected {
		if effects[k] < MinEffect {
			s.Ineffective++
			continue
		}
		s.Injected++
		big := effects[k] >= 2 && j.Duration >= 15*time.Minute
		if big {
			s.big++
		}
		first := math.Inf(1)
		for _, a := range alerts {
			if overlaps(a, j, end) && !a.DetectedAt.Before(j.Start) {
				first = math.Min(first, a.DetectedAt.Sub(j.Start).Minutes())
			}
		}
		if math.IsInf(first, 1) {
			continue
		}
		s.Detected++
		s.detectMins = append(s.detectMins, first)
		if big {
			s.bigDetected++
		}
	}
}

// overlaps says whether alert a's span meets injection j's (an open alert runs to end).
func overlaps(a Anomaly, j Injection, end time.Time) bool {
	aEnd := a.End
	if aEnd.IsZero() {
		aEnd = end
	}
	return a.Start.Before(j.End()) && aEnd.After(j.Start)
}

// Finish computes the figures from the tallies.
func (s *Scores) Finish() {
	s.MedianDetectMin = quantile(s.detectMins, 0.5)
	s.P95DetectMin = quantile(s.detectMins, 0.95)
	s.PrecisionPct = pct(s.Alerts-s.FalseAlerts, s.Alerts)
	s.RecallPct = pct(s.Detected, s.Injected)
	s.Recall2x15Pct = pct(s.bigDetected, s.big)
	if s.SeriesWeeks > 0 {
		s.FalsePer100Weeks = 100 * float64(s.FalseAlerts) / s.SeriesWeeks
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return 100 * float64(a) / float64(b)
}
