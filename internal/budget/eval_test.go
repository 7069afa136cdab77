package budget

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/forecast"
)

var t0 = time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC) // a Thursday

func TestBounds(t *testing.T) {
	tests := []struct {
		name       string
		period     Period
		at         time.Time
		wantStart  time.Time
		wantEndDay int // days from wantStart
	}{
		{"day", Day, t0.Add(13 * time.Hour), t0, 1},
		{"day in another zone", Day, time.Date(2026, 12, 3, 1, 0, 0, 0, time.FixedZone("CET", 3600)), time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), 1},
		{"week from thursday", Week, t0.Add(5 * time.Hour), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), 7},
		{"week on sunday", Week, time.Date(2026, 12, 6, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), 7},
		{"week on monday", Week, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), 7},
		{"december", Month, t0, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 31},
		{"february", Month, time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC), 29},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, end := Bounds(tt.period, tt.at)
			if !start.Equal(tt.wantStart) || !end.Equal(tt.wantStart.AddDate(0, 0, tt.wantEndDay)) {
				t.Errorf("Bounds = %v, %v; want %v + %d days", start, end, tt.wantStart, tt.wantEndDay)
			}
		})
	}
}

func TestMeasure(t *testing.T) {
	p := Policy{Name: "llm", Scope: Scope{Workload: "llm"}, Period: Day, Limit: 240}
	now := t0.Add(6 * time.Hour)
	tests := []struct {
		name                 string
		ivs                  []Interval
		wantActual, wantBurn float64
		wantForecast         float64
	}{
		{"nothing runs", nil, 0, 0, 0},
		{"two replicas since midnight", []Interval{{Workload: "llm", Count: 2, USDPerHour: 5, From: t0}}, 60, 10, 240},
		{"started yesterday: only today counts", []Interval{{Workload: "llm", USDPerHour: 4, From: t0.Add(-10 * time.Hour)}}, 24, 4, 96},
		{"ended at 03:00", []Interval{{Workload: "llm", USDPerHour: 4, From: t0.Add(time.Hour), To: t0.Add(3 * time.Hour)}}, 8, 0, 8},
		{"ends exactly now", []Interval{{Workload: "llm", USDPerHour: 4, From: t0, To: now}}, 24, 0, 24},
		{"starts in the future", []Interval{{Workload: "llm", USDPerHour: 4, From: now.Add(time.Hour)}}, 0, 0, 0},
		{"out of scope", []Interval{{Workload: "search", USDPerHour: 100, From: t0}}, 0, 0, 0},
		{"price change mid-morning", []Interval{
			{Workload: "llm", USDPerHour: 2, From: t0, To: t0.Add(4 * time.Hour)},
			{Workload: "llm", USDPerHour: 3, From: t0.Add(4 * time.Hour)}}, 14, 3, 68},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Measure(p, tt.ivs, now)
			if !near(s.Actual, tt.wantActual) || !near(s.BurnPerHour, tt.wantBurn) || !near(s.Forecast, tt.wantForecast) {
				t.Errorf("Measure = actual %v burn %v forecast %v; want %v %v %v",
					s.Actual, s.BurnPerHour, s.Forecast, tt.wantActual, tt.wantBurn, tt.wantForecast)
			}
			if s.Model != forecast.BurnRate || !near(s.Linear, s.Forecast) {
				t.Errorf("model %q linear %v: hours of history forecast by the burn rate", s.Model, s.Linear)
			}
			if !s.PeriodStart.Equal(t0) || !s.PeriodEnd.Equal(t0.AddDate(0, 0, 1)) {
				t.Errorf("period = %v..%v", s.PeriodStart, s.PeriodEnd)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestTrackerFiresOncePerPeriodAndClears(t *testing.T) {
	p := Policy{Name: "llm", Scope: Scope{Workload: "llm"}, Period: Day, Limit: 100, Currency: "USD",
		Thresholds: []Threshold{{At: Level{50, true}}, {At: Level{80, true}},
			{At: Level{80, true}, Action: BlockScaleUp}, {At: Level{100, true}, On: Forecast}}}
	p.Normalize()
	next := t0.AddDate(0, 0, 1)
	steps := []struct {
		name             string
		at               time.Time
		actual, forecast float64
		want             []string // basis:threshold, with " cleared" for a fall back
	}{
		{"quiet", t0.Add(1 * time.Hour), 40, 90, nil},
		{"half spent", t0.Add(2 * time.Hour), 55, 95, []string{"actual:50%"}},
		{"forecast over", t0.Add(3 * time.Hour), 60, 110, []string{"forecast:100%"}},
		{"forecast back under", t0.Add(4 * time.Hour), 65, 99, []string{"forecast:100% cleared"}},
		{"forecast over again: no storm", t0.Add(5 * time.Hour), 70, 120, nil},
		{"80% line shared by two actions: one alert", t0.Add(6 * time.Hour), 85, 130, []string{"actual:80%"}},
		{"forecast under again: cleared was announced", t0.Add(7 * time.Hour), 85, 90, nil},
		{"new period starts afresh", next.Add(time.Hour), 10, 120, []string{"forecast:100%"}},
		{"still over", next.Add(2 * time.Hour), 12, 121, nil},
	}
	var tr Tracker
	seen := map[string]bool{}
	for _, st := range steps {
		start, end := Bounds(Day, st.at)
		s := Spend{PeriodStart: start, PeriodEnd: end, Actual: st.actual, Forecast: st.forecast}
		var got []string
		for _, a := range tr.Step(p, s, st.at) {
			if err := events.Validate(a); err != nil {
				t.Fatalf("%s: invalid alert: %v", st.name, err)
			}
			if seen[a.ID] {
				t.Errorf("%s: alert id %s repeats", st.name, a.ID)
			}
			seen[a.ID] = true
			got = append(got, alertLine(a))
			if a.Limit != 100 || a.Currency != "USD" || !a.PeriodStart.Equal(start) || a.Scope != "workload=llm" {
				t.Errorf("%s: alert %+v", st.name, a)
			}
		}
		if !reflect.DeepEqual(got, st.want) {
			t.Errorf("%s: alerts %v, want %v", st.name, got, st.want)
		}
	}
}

func alertLine(a *events.BudgetAlert) string {
	s := a.Basis + ":" + a.Threshold
	if a.Cleared {
		s += " cleared"
	}
	return s
}

func TestTrackerRestoreAvoidsRepeatsAfterRestart(t *testing.T) {
	p := Policy{Name: "llm", Scope: Scope{All: true}, Period: Month, Limit: 100, Currency: "USD",
		Thresholds: []Threshold{{At: Level{80, true}, On: Actual, Action: Notify}}}
	start, end := Bounds(Month, t0)
	s := Spend{PeriodStart: start, PeriodEnd: end, Actual: 90}
	var before Tracker
	sent := before.Step(p, s, t0)
	if len(sent) != 1 {
		t.Fatalf("first run sent %d alerts, want 1", len(sent))
	}
	var after Tracker // a restarted arbiter
	after.Restore(sent)
	if again := after.Step(p, s, t0.Add(time.Minute)); len(again) != 0 {
		t.Errorf("restarted tracker re-sent %d alerts", len(again))
	}
	s.Actual = 70 // a refund or a shrunk scope: the fall back is still announced
	if got := after.Step(p, s, t0.Add(2*time.Minute)); len(got) != 1 || !got[0].Cleared {
		t.Errorf("fall back after restart: %v", got)
	}
}

func TestLedgerIntervalsPriceTheFleet(t *testing.T) {
	rs := func(h float64, ready int, price float64) *events.ReplicaState {
		return &events.ReplicaState{Meta: events.Meta{At: t0.Add(time.Duration(h * float64(time.Hour)))},
			Workload: "llm", Location: "gcp-usc1", Provider: "gcp", Market: events.Spot, Offer: "a3",
			USDPerHour: price, Ready: ready, Desired: ready}
	}
	l := Ledger{Teams: map[string]string{"llm": "search"}}
	for _, e := range []*events.ReplicaState{rs(0, 2, 10), rs(1, 2, 10), rs(2, 3, 10), rs(4, 3, 12), rs(5, 0, 12), rs(6, 1, 8)} {
		l.Observe(e)
	}
	p := Policy{Name: "x", Scope: Scope{Team: "search"}, Period: Day, Limit: 1000}
	s := Measure(p, l.Intervals(t0), t0.Add(8*time.Hour))
	// 2×10×2h + 3×10×2h + 3×12×1h + 0 + 1×8×2h
	if want := 40.0 + 60 + 36 + 16; !near(s.Actual, want) || !near(s.BurnPerHour, 8) {
		t.Errorf("actual %v burn %v, want %v and 8", s.Actual, s.BurnPerHour, want)
	}
	if run := l.Running(); len(run) != 1 || run[0].Count != 1 || run[0].USDPerHour != 8 || run[0].Market != "spot" {
		t.Errorf("running = %+v, want the one spot replica at 8/h", run)
	}
	l.Prune(t0.Add(4*time.Hour + 30*time.Minute))
	if n := len(l.Intervals(t0)); n != 2 {
		t.Errorf("after prune %d intervals, want the one ending at 05:00 and the open one (%v)", n, fmt.Sprint(l.Intervals(t0)))
	}
}

// TestMeasureForecastsTheWeek: a workload that runs on weekdays from 08:00 to 20:00. At 03:00
// nothing runs, so the burn rate says the month ends where it stands; the seasonal forecast
// knows the working days left.
func TestMeasureForecastsTheWeek(t *testing.T) {
	var ivs []Interval
	monthEnd := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	want := 0.0 // December's spend
	for d := t0.AddDate(0, 0, -60); d.Before(monthEnd); d = d.AddDate(0, 0, 1) {
		if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			continue
		}
		iv := Interval{Workload: "llm", Count: 2, USDPerHour: 5, From: d.Add(8 * time.Hour), To: d.Add(20 * time.Hour)}
		ivs = append(ivs, iv)
		want += iv.Cost(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), monthEnd)
	}
	now := t0.AddDate(0, 0, 7).Add(3 * time.Hour) // Thursday 10 December, 03:00
	p := Policy{Name: "llm", Scope: Scope{Workload: "llm"}, Period: Month, Limit: 5000}
	var past []Interval
	for _, iv := range ivs {
		if iv.From.Before(now) {
			past = append(past, iv)
		}
	}
	s := Measure(p, past, now)
	if s.Model != forecast.Weekly || math.Abs(s.Forecast-want) > 0.01*want {
		t.Errorf("forecast %.2f by %q, want %.2f by the weekly model", s.Forecast, s.Model, want)
	}
	if !near(s.Linear, s.Actual) || s.Actual > want/2 {
		t.Errorf("actual %.2f linear %.2f: nothing runs at 03:00, the burn-rate forecast is what was spent", s.Actual, s.Linear)
	}
	if s.Low > want+1e-6 || s.High < want-1e-6 {
		t.Errorf("interval %.2f..%.2f does not hold %.2f", s.Low, s.High, want)
	}
}
