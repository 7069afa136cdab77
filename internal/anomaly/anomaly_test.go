package anomaly

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// TestEachKindIsDetected injects each kind, ×3 for 2 hours on day 3 afternoon, into a small
// seasonal workload: Bursar's detector must open an anomaly over it within 30 minutes.
func TestEachKindIsDetected(t *testing.T) {
	start := epoch.Add(3*24*time.Hour + 14*time.Hour)
	tests := []struct {
		name string
		kind Kind
	}{
		{"price spike", PriceSpike},
		{"stuck on-demand fallback", StuckOnDemand},
		{"runaway scale-up", RunawayScaleUp},
		{"demand surge", DemandSurge},
		{"zone outage", ZoneOutage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := synthetic(5, 1)
			j := Injection{Kind: tt.kind, Workload: "w", Target: 0, Start: start, Duration: 2 * time.Hour, Size: 3}
			alerts := scopeAlerts(Apply(w, j), DefaultConfig())
			var found *Anomaly
			for i, a := range alerts {
				if overlaps(a, j, epoch.Add(5*24*time.Hour)) && !a.DetectedAt.Before(j.Start) {
					found = &alerts[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no anomaly over the injection; alerts: %+v", alerts)
			}
			if d := found.DetectedAt.Sub(j.Start); d > 30*time.Minute {
				t.Errorf("detected after %s, want within 30 minutes", d)
			}
			if found.ImpactUSD <= 0 || found.ObservedUSDPerHour <= found.ExpectedUSDPerHour {
				t.Errorf("impact $%.2f, observed %.2f vs expected %.2f: want spend above the baseline",
					found.ImpactUSD, found.ObservedUSDPerHour, found.ExpectedUSDPerHour)
			}
			if len(found.Explanation) == 0 {
				t.Error("no explanation")
			}
		})
	}
}

// TestNoAlertOnCleanSeasonalSeries runs every detector over two clean weeks.
func TestNoAlertOnCleanSeasonalSeries(t *testing.T) {
	w := synthetic(14, 2)
	if a := scopeAlerts(w, DefaultConfig()); len(a) > 0 {
		t.Errorf("Bursar's detector alerted on a clean series: %+v", a[0])
	}
	if a := Run(NewDaily("w", step), w.Total()); len(a) > 0 {
		t.Errorf("the daily batch alerted on a clean series: %+v", a[0])
	}
}

// TestZoneOutageIsExplainedByLocation checks the explanation names the risers and the fallen
// zone.
func TestZoneOutageIsExplainedByLocation(t *testing.T) {
	w := synthetic(5, 3)
	j := Injection{Kind: ZoneOutage, Workload: "w", Target: 1, Start: epoch.Add(3*24*time.Hour + 12*time.Hour), Duration: 3 * time.Hour, Size: 4}
	alerts := scopeAlerts(Apply(w, j), DefaultConfig())
	if len(alerts) == 0 {
		t.Fatal("no anomaly")
	}
	names := map[string]bool{}
	for _, c := range alerts[0].Explanation {
		names[c.Series] = true
	}
	if !names["w/b/spot"] || !names["w/a/spot"] {
		t.Errorf("explanation %+v: want zone a's rise and zone b's fall", alerts[0].Explanation)
	}
}

func TestExplain(t *testing.T) {
	tests := []struct {
		name     string
		children []Contribution
		want     []string
	}{
		{"nothing rose", []Contribution{{"a", 5, 5}, {"b", 3, 2}}, nil},
		{"one riser is enough", []Contribution{{"a", 5, 15}, {"b", 3, 4}, {"c", 1, 1}}, []string{"a"}},
		{"two risers for 80 %", []Contribution{{"a", 5, 10}, {"b", 3, 7}, {"c", 1, 1.5}}, []string{"a", "b"}},
		{"a fall beside a rise", []Contribution{{"a", 5, 15}, {"b", 6, 0}}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range Explain(tt.children) {
				got = append(got, c.Series)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Explain = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestQuieterSilencesARepeatOfAnExpectedCause: an answer "expected" quiets the same cause, not
// another; a later "not expected" alerts again.
func TestQuieterSilencesARepeatOfAnExpectedCause(t *testing.T) {
	first := Anomaly{Series: "team-a", Explanation: []Contribution{{Series: "w/b/spot"}, {Series: "w/a/on_demand"}}}
	repeat := Anomaly{Series: "team-a", ImpactUSD: 40, Explanation: []Contribution{{Series: "w/a/on_demand"}, {Series: "w/b/spot"}}}
	other := Anomaly{Series: "team-a", Explanation: []Contribution{{Series: "w/c/spot"}}}
	var q Quieter
	if !q.Alert(first) {
		t.Fatal("an unanswered anomaly must alert")
	}
	q.Answer(Feedback{Cause: first.Cause(), Expected: true})
	if q.Alert(repeat) {
		t.Error("a repeat of a cause answered expected alerted")
	}
	if !q.Alert(other) {
		t.Error("another cause was quieted")
	}
	q.Answer(Feedback{Cause: first.Cause(), Expected: false})
	if !q.Alert(repeat) {
		t.Error("a cause answered not expected at last must alert again")
	}
}

func TestOpenCostRuleByHand(t *testing.T) {
	pts := func(vs ...float64) []Point {
		out := make([]Point, len(vs))
		for i, v := range vs {
			out[i] = Point{At: epoch.Add(time.Duration(i) * time.Hour), USDPerHour: v}
		}
		return out
	}
	tests := []struct {
		name   string
		d      Detector
		series []Point
		want   int // anomalies
	}{
		// MAD 0: any rise is anomalous (the proposal's rule).
		{"flat then a rise, MAD", NewOpenCostMAD("s", time.Hour), pts(2, 2, 2, 2, 2.1), 1},
		// before the last step: median 2, MAD 1, so 0.6745 × (6-2)/1 = 2.7 ≤ 3.5 and 8 gives 4.05.
		{"under the MAD threshold", NewOpenCostMAD("s", time.Hour), pts(3, 1, 2, 1, 3, 6), 0},
		{"over the MAD threshold", NewOpenCostMAD("s", time.Hour), pts(3, 1, 2, 1, 3, 8), 1},
		// a cost under $0.10 a step is skipped.
		{"micro cost", NewOpenCostMAD("s", time.Hour), pts(0.01, 0.01, 0.01, 0.05), 0},
		// before the last step: mean 2, sample deviation 1, so 4.5 gives z 2.5 and 5.5 gives 3.5.
		{"z-score under", NewOpenCostZ("s", time.Hour), pts(3, 1, 2, 1, 3, 4.5), 0},
		{"z-score over", NewOpenCostZ("s", time.Hour), pts(3, 1, 2, 1, 3, 5.5), 1},
		{"two anomalous steps in a row are one anomaly", NewOpenCostMAD("s", time.Hour), pts(2, 2, 2, 9, 9, 2), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Run(tt.d, tt.series); len(got) != tt.want {
				t.Errorf("got %d anomalies, want %d: %+v", len(got), tt.want, got)
			}
		})
	}
}

// TestDailyFindsTheDayAtMidnight: a doubled day is found at the midnight after it.
func TestDailyFindsTheDayAtMidnight(t *testing.T) {
	w := synthetic(10, 4)
	j := Injection{Kind: DemandSurge, Target: 0, Start: epoch.Add(7*24*time.Hour + 13*time.Hour), Duration: 6 * time.Hour, Size: 3}
	got := Run(NewDaily("w", step), Apply(w, j).Total())
	if len(got) != 1 {
		t.Fatalf("got %d anomalies, want 1: %+v", len(got), got)
	}
	if want := epoch.Add(8 * 24 * time.Hour); !got[0].DetectedAt.Equal(want) || !got[0].Start.Equal(want.Add(-24*time.Hour)) {
		t.Errorf("detected %s (start %s), want at %s", got[0].DetectedAt, got[0].Start, want)
	}
}

func TestScoresByHand(t *testing.T) {
	end := epoch.Add(7 * 24 * time.Hour)
	inj := []Injection{
		{Start: epoch.Add(10 * time.Hour), Duration: time.Hour, Size: 3},
		{Start: epoch.Add(30 * time.Hour), Duration: time.Hour, Size: 1.5},
		{Start: epoch.Add(50 * time.Hour), Duration: time.Hour, Size: 4}, // no effect: not scored
	}
	alerts := []Anomaly{
		{Start: epoch.Add(10 * time.Hour), DetectedAt: epoch.Add(10*time.Hour + 10*time.Minute), End: epoch.Add(11 * time.Hour)},
		{Start: epoch.Add(90 * time.Hour), DetectedAt: epoch.Add(90 * time.Hour), End: epoch.Add(91 * time.Hour)}, // false
	}
	var s Scores
	s.Tally(inj, []float64{3, 1.5, 1}, alerts, end, 1)
	s.Finish()
	want := Scores{Injected: 2, Detected: 1, Ineffective: 1, Alerts: 2, FalseAlerts: 1, MedianDetectMin: 10, P95DetectMin: 10,
		PrecisionPct: 50, RecallPct: 50, Recall2x15Pct: 100, FalsePer100Weeks: 100, SeriesWeeks: 1}
	s.big, s.bigDetected, s.detectMins = 0, 0, nil
	if !reflect.DeepEqual(s, want) {
		t.Errorf("scores\n %+v\nwant\n %+v", s, want)
	}
}

func TestPlanIsSeededAndInRange(t *testing.T) {
	w := synthetic(14, 5)
	a, b := Plan(7, w), Plan(7, w)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two plans")
	}
	if reflect.DeepEqual(a, Plan(8, w)) {
		t.Error("another seed gave the same plan")
	}
	if len(a) != 6 {
		t.Errorf("%d injections in 14 days, want one per 2-day slot after the 2-day warm-up: 6", len(a))
	}
	for _, j := range a {
		if j.Size < minSize || j.Size > maxSize || j.Duration < minDuration || j.Duration > Slot ||
			math.IsNaN(j.Size) || j.Start.Before(epoch.Add(WarmUp)) {
			t.Errorf("injection out of range: %+v", j)
		}
	}
}

// TestApplyKinds checks what each kind does to one step, by hand.
func TestApplyKinds(t *testing.T) {
	w := &Workload{Name: "w", Start: epoch, Step: step, Leaves: []Leaf{
		{Series: "a/spot", Location: "a", USDPerHour: []float64{2, 2}, GPUs: []float64{1, 1}, Tokens: []float64{10, 10}},
		{Series: "b/spot", Location: "b", USDPerHour: []float64{4, 4}, GPUs: []float64{2, 2}, Tokens: []float64{20, 20}},
	}}
	at := Injection{Target: 0, Start: epoch.Add(step), Duration: step, Size: 3}
	tests := []struct {
		kind       Kind
		wantUSD    []float64 // step 1, per leaf
		wantLeaves int
	}{
		{PriceSpike, []float64{6, 4}, 2},
		{RunawayScaleUp, []float64{6, 4}, 2},
		{DemandSurge, []float64{6, 12}, 2},
		{ZoneOutage, []float64{0, 10}, 2},
		{StuckOnDemand, []float64{0, 4, 6}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			j := at
			j.Kind = tt.kind
			got := Apply(w, j)
			if len(got.Leaves) != tt.wantLeaves {
				t.Fatalf("%d leaves, want %d", len(got.Leaves), tt.wantLeaves)
			}
			for k, want := range tt.wantUSD {
				if got.Leaves[k].USDPerHour[1] != want || got.Leaves[k].USDPerHour[0] != w.leafOr(k, 0) {
					t.Errorf("leaf %d: $%v/h, want %v at step 1 and step 0 untouched", k, got.Leaves[k].USDPerHour, want)
				}
			}
			if w.Leaves[0].USDPerHour[1] != 2 {
				t.Fatal("Apply changed its input")
			}
		})
	}
}

// leafOr is leaf k's spend at step i, 0 for a leaf the injection added.
func (w *Workload) leafOr(k, i int) float64 {
	if k >= len(w.Leaves) {
		return 0
	}
	return w.Leaves[k].USDPerHour[i]
}

func TestDetectorsAreDeterministic(t *testing.T) {
	w := Apply(synthetic(6, 6), Injection{Kind: RunawayScaleUp, Start: epoch.Add(4 * 24 * time.Hour), Duration: 4 * time.Hour, Size: 2})
	if a, b := scopeAlerts(w, DefaultConfig()), scopeAlerts(w, DefaultConfig()); !reflect.DeepEqual(a, b) {
		t.Error("two runs of Bursar's detector differ")
	}
}

// TestGapsAreSkipped: NaN and infinite steps (gaps in a rollup) neither alert nor poison the
// history: the detectors then behave as on the series without them.
func TestGapsAreSkipped(t *testing.T) {
	w := synthetic(4, 7)
	clean := w.Total()
	var gappy []Point
	for i, p := range clean {
		gappy = append(gappy, p)
		if i%97 == 0 {
			gappy = append(gappy, Point{At: p.At, USDPerHour: math.NaN()}, Point{At: p.At, USDPerHour: math.Inf(1)})
		}
	}
	for _, build := range []func() Detector{
		func() Detector { return NewSeasonal("w", DefaultConfig()) },
		func() Detector { return NewOpenCostMAD("w", step) },
		func() Detector { return NewDaily("w", step) },
	} {
		if a, b := Run(build(), clean), Run(build(), gappy); !reflect.DeepEqual(a, b) {
			t.Errorf("%T: with gaps %d anomalies, without %d", build(), len(b), len(a))
		}
	}
}
