package anomalywatch

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

func TestWatcherPublishesEachScopesAnomaly(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	c, sp := &clock{t: t0}, &spend{}
	policies := []budget.Policy{{Name: "search-monthly", Scope: budget.Scope{Team: "search"}, Period: budget.Month, Limit: 50000}}
	w, err := New(Options{Config: testConfig(), Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c,
		Policies: func() []budget.Policy { return policies }, Detector: detector()})
	if err != nil {
		t.Fatal(err)
	}
	sp.set(spot, base)
	run(ctx, w, c, 6*time.Hour)
	if got := published(t, env.JS); len(got) != 0 {
		t.Fatalf("steady spend raised %d anomaly events: %+v", len(got), got[0])
	}
	sp.set(spot, fallback) // the on-demand fallback that does not return
	run(ctx, w, c, 30*time.Minute)
	sp.set(spot, base)
	run(ctx, w, c, time.Hour)

	evs := published(t, env.JS)
	opened := map[string]*events.CostAnomaly{}
	closed := map[string]bool{}
	for _, e := range evs {
		switch e.State {
		case StateOpen:
			opened[e.Series] = e
		case StateClosed:
			closed[e.Anomaly] = true
		}
	}
	for _, scope := range []string{"workload=llm", "team=search", "budget=search-monthly"} {
		e := opened[scope]
		if e == nil {
			t.Fatalf("no anomaly opened for %s; events: %d", scope, len(evs))
		}
		if e.Observed < 90 || e.Expected > 40 || e.Expected < 30 {
			t.Errorf("%s: observed %.2f expected %.2f $/h, want about 95 over 35", scope, e.Observed, e.Expected)
		}
		if !e.Start.Equal(t0.Add(6*time.Hour)) || e.At.Sub(e.Start) > 15*time.Minute {
			t.Errorf("%s: started %s, detected %s; the fallback began %s", scope, e.Start, e.At, t0.Add(6*time.Hour))
		}
		if !slices.ContainsFunc(e.Moved, func(m string) bool {
			return m == "location=aws-use1,gpu_model=H100-80GB,market=on_demand" ||
				m == "workload=llm,location=aws-use1,gpu_model=H100-80GB,market=on_demand"
		}) {
			t.Errorf("%s: moved %q does not name the on-demand series", scope, e.Moved)
		}
		if !closed[e.Anomaly] {
			t.Errorf("%s: anomaly %s never closed after the spend came back", scope, e.Anomaly)
		}
	}
	if e := opened["workload=llm"]; e.Moved[0] != "location=aws-use1,gpu_model=H100-80GB,market=on_demand" {
		t.Errorf("a workload's moved dimensions repeat the workload: %q", e.Moved)
	}
}

func TestStandbyPublishesNothing(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	c, sp := &clock{t: t0}, &spend{}
	w, err := New(Options{Config: testConfig(), Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c,
		Leading: func() bool { return false }, Detector: detector()})
	if err != nil {
		t.Fatal(err)
	}
	sp.set(spot, base)
	run(ctx, w, c, 6*time.Hour)
	sp.set(spot, fallback)
	run(ctx, w, c, 30*time.Minute)
	if got := published(t, env.JS); len(got) != 0 {
		t.Fatalf("a standby published %d anomaly events", len(got))
	}
}

// failing refuses every publish until told otherwise, like a JetStream that does not answer.
type failing struct {
	pub  *bus.Publisher
	down bool
	n    int
}

func (f *failing) Publish(ctx context.Context, e events.Event) error {
	if f.down {
		f.n++
		return errors.New("nats: timeout")
	}
	return f.pub.Publish(ctx, e)
}

func TestUnackedChangesPublishedInOrderLater(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	c, sp := &clock{t: t0}, &spend{}
	pub := &failing{pub: bus.NewPublisher(env.JS)}
	w, err := New(Options{Config: &testConfigNoTeam, Spend: sp, Publisher: pub, Clock: c, Detector: detector()})
	if err != nil {
		t.Fatal(err)
	}
	sp.set(spot, base)
	run(ctx, w, c, 6*time.Hour)
	pub.down = true
	sp.set(spot, fallback)
	run(ctx, w, c, 20*time.Minute)
	if pub.n == 0 || w.Unsent() == 0 {
		t.Fatalf("nothing was tried (%d) or kept (%d) while JetStream was down", pub.n, w.Unsent())
	}
	pub.down = false
	run(ctx, w, c, 5*time.Minute)
	if w.Unsent() != 0 {
		t.Fatalf("%d changes still unsent", w.Unsent())
	}
	evs := published(t, env.JS)
	if len(evs) < 2 || evs[0].State != StateOpen {
		t.Fatalf("events %d, first %+v: want the open first", len(evs), evs)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].At.Before(evs[i-1].At) {
			t.Fatalf("event %d at %s before event %d at %s", i, evs[i].At, i-1, evs[i-1].At)
		}
	}
}

func TestTickCatchesUpAtMostAnHour(t *testing.T) {
	env := newEnv(t)
	c, sp := &clock{t: t0}, &spend{}
	w, err := New(Options{Config: &testConfigNoTeam, Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c, Detector: detector()})
	if err != nil {
		t.Fatal(err)
	}
	w.Tick(context.Background())
	c.Add(10 * time.Hour)
	w.Tick(context.Background())
	if want := t0.Add(10*time.Hour + 5*time.Minute); !w.next.Equal(want) {
		t.Fatalf("next step ends %s, want %s", w.next, want)
	}
	c.Add(2 * time.Minute) // within the same step: nothing to observe
	w.Tick(context.Background())
	if want := t0.Add(10*time.Hour + 5*time.Minute); !w.next.Equal(want) {
		t.Fatalf("next step ends %s after a tick inside a step, want %s", w.next, want)
	}
}
