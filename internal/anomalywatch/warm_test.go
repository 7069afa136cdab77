package anomalywatch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// recordSteady writes what the recorder would hold for llm's steady spend (spot and base),
// reported every minute from since to until.
func recordSteady(t *testing.T, st *store.Store, since, until time.Time) {
	t.Helper()
	var b strings.Builder
	n := 0
	for at := since; at.Before(until); at = at.Add(time.Minute) {
		for _, g := range []arbiter.Burn{spot, base} {
			n++
			fmt.Fprintf(&b, "rs%d\t%s\t1\t%s\t%s\t%s\t%s\t%s/x/%s\t%s\t%d\t%g\t%d\t%d\n", n, at.UTC().Format("2006-01-02 15:04:05.000"),
				g.Workload, g.Location, g.Provider, g.Market, g.Location, g.Market, g.GPUModel, int(g.GPUs)/g.Ready,
				g.USDPerHour/float64(g.Ready), g.Ready, g.Ready)
		}
	}
	cols := "id, at, version, workload, location, provider, market, offer, gpu_model, gpus_per_replica, usd_per_hour, desired, ready"
	if err := st.Insert(context.Background(), "replica_state", cols, t.Name(), []byte(b.String())); err != nil {
		t.Fatal(err)
	}
}

func TestWarmedWatcherAlertsAtOnceAfterARestart(t *testing.T) {
	st := storetest.New(t)
	start := t0.Add(6 * time.Hour) // the restart: 6 hours of history recorded before it
	recordSteady(t, st, t0, start)
	tests := []struct {
		name     string
		warm     bool
		wantOpen bool
	}{
		{"warmed from the history", true, true},
		{"learning from nothing", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			ctx := context.Background()
			c, sp := &clock{t: start}, &spend{}
			w, err := New(Options{Config: &testConfigNoTeam, Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c, Detector: detector()})
			if err != nil {
				t.Fatal(err)
			}
			if tc.warm {
				if err := w.Warm(ctx, st, 24*time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			sp.set(spot, fallback)
			run(ctx, w, c, 30*time.Minute)
			opened := countOpened(published(t, env.JS))
			if (opened > 0) != tc.wantOpen {
				t.Fatalf("%d anomalies opened in the 30 minutes after the restart; want some: %v", opened, tc.wantOpen)
			}
		})
	}
}

func TestWarmFromNothing(t *testing.T) {
	st := storetest.New(t)
	env := newEnv(t)
	c := &clock{t: t0}
	w, err := New(Options{Config: &testConfigNoTeam, Spend: &spend{}, Publisher: bus.NewPublisher(env.JS), Clock: c, Detector: detector()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Warm(context.Background(), st, 24*time.Hour); err != nil {
		t.Fatalf("an empty history: %v", err)
	}
	if !w.next.Equal(t0) {
		t.Fatalf("next step ends %s, want %s", w.next, t0)
	}
}
