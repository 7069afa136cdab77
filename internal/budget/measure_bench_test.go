package budget

import (
	"testing"
	"time"
)

// BenchmarkMeasure is one policy's evaluation as the arbiter makes it on every pass: a month
// budget on its 30th day, its scope running every hour of twelve weeks on a new price each hour.
func BenchmarkMeasure(b *testing.B) {
	now := time.Date(2026, 12, 30, 12, 0, 0, 0, time.UTC)
	var ivs []Interval
	for t := now.Add(-12 * 7 * 24 * time.Hour); t.Before(now); t = t.Add(time.Hour) {
		ivs = append(ivs, Interval{Workload: "llm", USDPerHour: float64(5 + t.Hour()%7), From: t, To: t.Add(time.Hour)})
	}
	p := Policy{Name: "llm", Scope: Scope{Workload: "llm"}, Period: Month, Limit: 1e6}
	for b.Loop() {
		Measure(p, ivs, now)
	}
}
