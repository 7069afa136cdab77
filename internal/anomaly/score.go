package anomaly

import (
	"math"
	"slices"
	"time"
)

// Scores are one detector's figures on a benchmark.
type Scores struct {
	Injected, Detected  int
	Alerts, FalseAlerts int
	MedianDetectMin     float64
	P95DetectMin        float64
	PrecisionPct        float64
	RecallPct           float64
	Recall2x15Pct       float64 // recall of the injections of ≥ 2× lasting ≥ 15 minutes
	FalsePer100Weeks    float64
	SeriesWeeks         float64
	big, bigDetected    int
	detectMins          []float64
}

// Tally adds one series' outcome: what was injected into it, what the detector raised on it,
// and how long the series is. An alert is true when it overlaps an injection; an injection is
// detected by the first alert that overlaps it, after the injection started, and its
// time-to-detect is from the injection's start to that alert's DetectedAt.
func (s *Scores) Tally(injected []Injection, alerts []Anomaly, end time.Time, weeks float64) {
	s.SeriesWeeks += weeks
	s.Alerts += len(alerts)
	for _, a := range alerts {
		if !slices.ContainsFunc(injected, func(j Injection) bool { return overlaps(a, j, end) }) {
			s.FalseAlerts++
		}
	}
	for _, j := range injected {
		s.Injected++
		big := j.Size >= 2 && j.Duration >= 15*time.Minute
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
