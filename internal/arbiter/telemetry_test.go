package arbiter

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

func tokensAt(at time.Time, replica string, tokens, requests int64) *events.TokensSample {
	return &events.TokensSample{Meta: events.Meta{ID: fmt.Sprintf("%s@%s", replica, at), At: at}, Location: "a",
		Workload: "svc", Replica: replica, GenerationTokens: tokens, Requests: requests}
}

// TestImpossibleCounterJumpIsNotDemand: two scrape targets sharing a replica name make its
// counter jump by 1e12 in 15 s. With max: 0 that asked for 26,666,667 replicas; the jump is a bad
// sample, reported and not folded, and the series goes on from it.
func TestImpossibleCounterJumpIsNotDemand(t *testing.T) {
	w := &fleet.Workload{Name: "svc", Scaling: fleet.Scaling{Metric: fleet.MetricTokens, PerReplica: 2500}}
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		samples    []*events.TokensSample
		wantBad    []bool
		wantDemand int
	}{
		{"a plausible rise", []*events.TokensSample{tokensAt(t0, "r1", 1000, 10), tokensAt(t0.Add(15*time.Second), "r1", 76000, 40)},
			[]bool{false, false}, 2}, // 5000 tokens/s at 2500 a replica
		{"a jump of 1e12 in 15 s", []*events.TokensSample{tokensAt(t0, "r1", 1000, 10), tokensAt(t0.Add(15*time.Second), "r1", 1e12, 40)},
			[]bool{false, true}, 0},
		{"a request jump", []*events.TokensSample{tokensAt(t0, "r1", 1000, 10), tokensAt(t0.Add(time.Second), "r1", 2000, 1e9)},
			[]bool{false, true}, 0},
		{"counting resumes after the jump", []*events.TokensSample{tokensAt(t0, "r1", 1000, 10),
			tokensAt(t0.Add(15*time.Second), "r1", 1e12, 40), tokensAt(t0.Add(30*time.Second), "r1", 1e12+75000, 70)},
			[]bool{false, true, false}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMarket(&fleet.Config{})
			for i, e := range tt.samples {
				err := m.tokens(e)
				if (err != nil) != tt.wantBad[i] {
					t.Fatalf("sample %d: err = %v, want bad = %v", i, err, tt.wantBad[i])
				}
				if err != nil && !strings.Contains(err.Error(), "replica r1 of workload svc at a") {
					t.Errorf("err = %q does not name the sample's series", err)
				}
			}
			if got := m.demand(w, 0, tt.samples[len(tt.samples)-1].At); got != tt.wantDemand {
				t.Errorf("demand = %d, want %d", got, tt.wantDemand)
			}
		})
	}
}

// TestDemandIsClampedToWhatTheFleetCanRun: many replicas each at a plausible rate still ask for
// no more than the planner's limit, or than the room the locations' capacity hints leave.
func TestDemandIsClampedToWhatTheFleetCanRun(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	w := &fleet.Workload{Name: "svc", Scaling: fleet.Scaling{Metric: fleet.MetricTokens, PerReplica: 10}}
	tests := []struct {
		name      string
		locations []fleet.Location
		ready     int
		want      int
	}{
		{"no capacity hints", []fleet.Location{{Name: "a"}, {Name: "b", Capacity: 4}}, 0, placement.MaxReplicas},
		{"every location hints", []fleet.Location{{Name: "a", Capacity: 4}, {Name: "b", Capacity: 6}}, 3, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMarket(&fleet.Config{Locations: tt.locations})
			for i := range 50 { // 50 replicas at 900,000 tokens/s: 4.5 million replicas of 10
				r := fmt.Sprintf("r%02d", i)
				for _, e := range []*events.TokensSample{tokensAt(t0, r, 0, 0), tokensAt(t0.Add(10*time.Second), r, 9e6, 100)} {
					if err := m.tokens(e); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := m.demand(w, tt.ready, t0.Add(10*time.Second)); got != tt.want {
				t.Errorf("demand = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestBudgetPolicyNamingNoWorkloadIsWarnedOnce: a policy whose scope names no workload of the
// fleet is loaded (the fleet file may be the one behind) but warned of, once per change.
func TestBudgetPolicyNamingNoWorkloadIsWarnedOnce(t *testing.T) {
	var log strings.Builder
	cfg := &fleet.Config{Locations: []fleet.Location{{Name: "a", Provider: "aws"}}, Workloads: []fleet.Workload{{Name: "svc"}}}
	b := &Budgets{o: BudgetOptions{Config: cfg, Log: slog.New(slog.NewTextHandler(&log, nil))}}
	good := budget.Policy{Name: "ok", Scope: budget.Scope{Workload: "svc"}, Currency: "USD"}
	typo := budget.Policy{Name: "typo", Scope: budget.Scope{Workload: "scv"}, Currency: "USD"}
	warned := map[string]string{}
	b.warnPolicies([]budget.Policy{good, typo}, warned)
	b.warnPolicies([]budget.Policy{good, typo}, warned) // a later change to another policy
	if n := strings.Count(log.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "policy=typo") || !strings.Contains(log.String(), "scope workload=scv matches no workload") {
		t.Errorf("warning = %q", log.String())
	}
	typo.Currency = "EUR" // a policy stored before other currencies were refused
	b.warnPolicies([]budget.Policy{good, typo}, warned)
	if n := strings.Count(log.String(), "level=WARN"); n != 2 || !strings.Contains(log.String(), "in EUR") {
		t.Errorf("after the currency changed: %d warnings, want 2 naming EUR:\n%s", n, log.String())
	}
}
