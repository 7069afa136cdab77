package arbiter

import (
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// dayShape is a serving day: 1,000 tokens/s at night, 5,000 from 08:00 to 20:00.
func dayShape(at time.Time) float64 {
	if h := at.Hour(); h >= 8 && h < 20 {
		return 5000
	}
	return 1000
}

// feedDays folds a sample every 15 s of one replica serving dayShape from start until end.
func feedDays(t *testing.T, m *market, start, end time.Time) {
	t.Helper()
	var tokens int64
	for at := start; at.Before(end); at = at.Add(15 * time.Second) {
		if err := m.tokens(tokensAt(at, "r1", tokens, 0)); err != nil {
			t.Fatal(err)
		}
		tokens += int64(dayShape(at) * 15)
	}
}

// TestDemandForecastPrewarmsAndSurvivesARestart: after two days of the same shape, the rate the
// workload is sized for rises to the day's level a cold start before 08:00, while the current rate
// is still the night's, and stays up before the evening fall; a market that folds the same
// samples again (a restarted arbiter reading back DemandLookback) sizes it the same.
func TestDemandForecastPrewarmsAndSurvivesARestart(t *testing.T) {
	w := fleet.Workload{Name: "svc", GPU: fleet.GPU{Models: []string{"H100-80GB"}}, ColdStart: 5 * time.Minute,
		Scaling: fleet.Scaling{Metric: fleet.MetricTokens, PerReplica: 1000}}
	cfg := &fleet.Config{Locations: []fleet.Location{{Name: "a"}}, Workloads: []fleet.Workload{w}}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	checks := []struct {
		at        time.Time
		now, want float64 // the current rate and the least the sizing rate may be
	}{
		{start.Add(2*24*time.Hour + 7*time.Hour), 1000, 1000},                   // 07:00: the night
		{start.Add(2*24*time.Hour + 7*time.Hour + 57*time.Minute), 1000, 4500},  // 07:57: a cold start before the rise
		{start.Add(2*24*time.Hour + 19*time.Hour + 57*time.Minute), 5000, 5000}, // 19:57: still the day
	}
	var runs [2][]float64
	for run := range runs {
		m := newMarket(cfg)
		from := start
		for _, c := range checks {
			feedDays(t, m, from, c.at)
			from = c.at
			now, _ := m.sumRates(&cfg.Workloads[0], c.at)
			rate, _, n, ok := m.demandRate(&cfg.Workloads[0], c.at)
			if !ok || n == 0 {
				t.Fatalf("at %s: no sizing rate (ok %v) or no forecast measured (%d)", c.at.Format("15:04"), ok, n)
			}
			if now != c.now || rate < c.want {
				t.Errorf("run %d at %s: current %.0f tokens/s (want %.0f), sized for %.0f (want at least %.0f)",
					run, c.at.Format("15:04"), now, c.now, rate, c.want)
			}
			runs[run] = append(runs[run], rate)
		}
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Errorf("the restarted market sizes for %v, the first for %v", runs[1], runs[0])
	}
	if night := runs[0][0]; night > 2*1000 {
		t.Errorf("at night it sizes for %.0f tokens/s: the headroom keeps more than twice the demand warm", night)
	}
}

// TestOutputTokensCountGeneratedOnly: a workload sized in output tokens reads the generated
// tokens' rate, one sized in tokens the prompt's and the generated together.
func TestOutputTokensCountGeneratedOnly(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	m := newMarket(&fleet.Config{})
	for _, e := range []*events.TokensSample{tokensAt(t0, "r1", 0, 0), tokensAt(t0.Add(10*time.Second), "r1", 1000, 10)} {
		e.PromptTokens = e.GenerationTokens * 3
		if err := m.tokens(e); err != nil {
			t.Fatal(err)
		}
	}
	for metric, want := range map[string]float64{fleet.MetricOutputTokens: 100, fleet.MetricTokens: 400, fleet.MetricRequests: 1} {
		w := &fleet.Workload{Name: "svc", Scaling: fleet.Scaling{Metric: metric}}
		if got, seen := m.sumRates(w, t0.Add(10*time.Second)); !seen || got != want {
			t.Errorf("%s: %v (seen %v), want %v", metric, got, seen, want)
		}
	}
}
