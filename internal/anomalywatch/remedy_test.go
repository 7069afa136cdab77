package anomalywatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
)

// remedies records the remedies asked of the arbiter (its side runs for real in
// internal/arbiter's remedy tests, with NATS, Slack's endpoint and the sim actuator).
type remedies struct {
	mu   sync.Mutex
	asks []arbiter.RemedyRequest
}

func (r *remedies) Remedy(_ context.Context, req arbiter.RemedyRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asks = append(r.asks, req)
	return "hold-" + req.Anomaly, nil
}

func (r *remedies) got() []arbiter.RemedyRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arbiter.RemedyRequest(nil), r.asks...)
}

func TestStuckFallbackAsksForARemedyWhereAPolicySaysSo(t *testing.T) {
	tests := []struct {
		name     string
		remedies []budget.Remedy
		want     int // remedies asked for the one excursion: its workload scope's anomaly, once open
	}{
		{"policy wants the fallback remedy", []budget.Remedy{budget.RemedyFallback}, 1},
		{"policy without the remedy", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			ctx := context.Background()
			c, sp, rem := &clock{t: t0}, &spend{}, &remedies{}
			policies := []budget.Policy{{Name: "search-monthly", Scope: budget.Scope{Team: "search"}, Period: budget.Month,
				Limit: 50000, Approvers: []string{"U0APPROVER"}, Remedies: tt.remedies}}
			w, err := New(Options{Config: testConfig(), Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c,
				Policies: func() []budget.Policy { return policies }, Detector: detector(), Remedies: rem})
			if err != nil {
				t.Fatal(err)
			}
			sp.set(spot, base)
			run(ctx, w, c, 6*time.Hour)
			sp.set(spot, fallback) // the on-demand fallback that does not return
			run(ctx, w, c, 30*time.Minute)

			anomalies := map[string]bool{}
			for _, a := range rem.got() {
				anomalies[a.Anomaly] = true
				if a.Workload != "llm" || a.Policy.Name != "search-monthly" || a.Remedy != budget.RemedyFallback {
					t.Errorf("asked %+v, want llm's fallback under search-monthly", a)
				}
				if a.Observed <= a.Expected {
					t.Errorf("asked with observed %.2f not above expected %.2f", a.Observed, a.Expected)
				}
			}
			if len(anomalies) != tt.want {
				t.Errorf("remedies asked for %d anomalies (%v), want %d", len(anomalies), anomalies, tt.want)
			}
			for a := range anomalies {
				if want := "workload=llm@"; len(a) < len(want) || a[:len(want)] != want {
					t.Errorf("remedy asked for anomaly %s, want the workload scope's", a)
				}
			}
		})
	}
}

func TestSpotSpendAsksNoRemedy(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	c, sp, rem := &clock{t: t0}, &spend{}, &remedies{}
	policies := []budget.Policy{{Name: "search-monthly", Scope: budget.Scope{Team: "search"}, Period: budget.Month,
		Limit: 50000, Approvers: []string{"U0APPROVER"}, Remedies: []budget.Remedy{budget.RemedyFallback}}}
	w, err := New(Options{Config: testConfig(), Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c,
		Policies: func() []budget.Policy { return policies }, Detector: detector(), Remedies: rem})
	if err != nil {
		t.Fatal(err)
	}
	sp.set(spot, base)
	run(ctx, w, c, 6*time.Hour)
	surge := spot
	surge.Ready, surge.GPUs, surge.USDPerHour = 16, 128, 80 // a scale-up on spot: an anomaly, not a fallback
	sp.set(surge, base)
	run(ctx, w, c, 30*time.Minute)
	if n := len(published(t, env.JS)); n == 0 {
		t.Fatal("the spot surge raised no anomaly; the test shows nothing")
	}
	if got := rem.got(); len(got) != 0 {
		t.Errorf("a spot surge asked for remedies: %+v", got)
	}
}

// TestExpectedCauseAsksNoRemedy: once people answered a fallback's cause as expected, the same
// cause opening again asks for no remedy (the first one asked, before the answer).
func TestExpectedCauseAsksNoRemedy(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	c, sp, rem := &clock{t: t0}, &spend{}, &remedies{}
	policies := []budget.Policy{{Name: "search-monthly", Scope: budget.Scope{Team: "search"}, Period: budget.Month,
		Limit: 50000, Approvers: []string{"U0APPROVER"}, Remedies: []budget.Remedy{budget.RemedyFallback}}}
	w, err := New(Options{Config: testConfig(), Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c,
		Policies: func() []budget.Policy { return policies }, Detector: detector(), Remedies: rem})
	if err != nil {
		t.Fatal(err)
	}
	sp.set(spot, base)
	run(ctx, w, c, 6*time.Hour)
	sp.set(spot, fallback)
	run(ctx, w, c, 30*time.Minute)
	asked := rem.got()
	if len(asked) == 0 {
		t.Fatal("the first fallback asked for no remedy; the test shows nothing")
	}
	for _, e := range published(t, env.JS) {
		if e.Anomaly == asked[0].Anomaly && e.State == StateOpen {
			if err := w.Answer(ctx, Answer{Cause: e.Cause, Expected: true, Actor: "U0APPROVER", At: c.Now(), Anomaly: e.Anomaly, Series: e.Series}); err != nil {
				t.Fatal(err)
			}
		}
	}
	sp.set(spot, base)
	run(ctx, w, c, 2*time.Hour)
	before := len(rem.got())
	sp.set(spot, fallback) // the same cause again
	run(ctx, w, c, 30*time.Minute)
	opened := 0
	for _, e := range published(t, env.JS) {
		if e.State == StateOpen && e.Series == "workload=llm" && e.Anomaly != asked[0].Anomaly {
			opened++
		}
	}
	if opened == 0 {
		t.Fatal("the second fallback opened no anomaly; the test shows nothing")
	}
	if got := rem.got()[before:]; len(got) != 0 {
		t.Errorf("a cause answered as expected asked for remedies again: %+v", got)
	}
}
