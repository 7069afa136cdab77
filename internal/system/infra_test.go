package system_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/recorder"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
	"github.com/bursar-dev/bursar/internal/system"
)

// builds numbers the runs of TestOpenInfraBuildsTheWholeSystem, each in a database of its own in
// the process's one embedded store directory (storetest.EmbeddedDir).
var builds atomic.Int64

func TestMain(m *testing.M) {
	code := m.Run()
	storetest.RemoveEmbeddedDir()
	os.Exit(code)
}

// TestOpenInfraBuildsTheWholeSystem builds what arbiter run builds on its data dir: embedded NATS
// with the streams and buckets, the embedded store and the recorder, and the arbiter system on
// them with the sim fleet as its actuator. A price published on the bus reaches the store, the
// arbiter plans on it, a second build on the same data dir is refused while the first holds it,
// and after Close the data dir can be taken again.
func TestOpenInfraBuildsTheWholeSystem(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	runs := builds.Add(1)
	o := system.InfraOptions{Name: "system-test", LockDir: dir, Program: "system test",
		Embedded: bus.EmbeddedOptions{Port: -1, StoreDir: filepath.Join(dir, "nats")},
		Streams:  bus.Options{LeaseTTL: time.Second},
		History: &system.HistoryOptions{Store: store.Config{DataDir: storetest.EmbeddedDir(t), Owner: "system test",
			Database: fmt.Sprintf("infra_test_%d", runs)},
			Recorder: recorder.Config{MaxDelay: 50 * time.Millisecond}}}
	in, err := system.OpenInfra(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			in.Close()
		}
	}()
	if err := bus.Ready(ctx, in.JS, bus.Market, bus.Telemetry, bus.Fleet); err != nil {
		t.Fatal(err)
	}
	if in.Server == nil || in.Store == nil || in.Recorder == nil {
		t.Fatalf("built: server %v, store %v, recorder %v; want all three", in.Server != nil, in.Store != nil, in.Recorder != nil)
	}

	_, err = system.OpenInfra(ctx, o)
	var held *system.DataDirHeldError
	if !errors.As(err, &held) || held.Dir != dir {
		t.Fatalf("a second build on %s: err %v, want DataDirHeldError", dir, err)
	}

	recCtx, stopRec := context.WithCancel(ctx)
	recDone := make(chan error, 1)
	go func() { recDone <- in.Recorder.Run(recCtx) }()
	sys, fl := startArbiter(ctx, t, in)
	sys.Service.Step(ctx)
	if desired := desiredReplicas(ctx, t, fl); desired != 2 {
		t.Errorf("the arbiter asked the sim fleet for %d replicas, want 2", desired)
	}
	waitRecorded(ctx, t, in.Store)
	if err := sys.Close(); err != nil {
		t.Error(err)
	}
	stopRec()
	if err := <-recDone; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("recorder: %v", err)
	}
	in.Close()
	closed = true

	o.History = nil // chDB keeps one engine a process: take the dir and the bus again without it
	again, err := system.OpenInfra(ctx, o)
	if err != nil {
		t.Fatalf("building again after Close: %v", err)
	}
	again.Close()
}

// startArbiter builds the arbiter system on in, with the sim fleet of fleetYAML, and starts it
// after the market's prices are published.
func startArbiter(ctx context.Context, t *testing.T, in *system.Infra) (*system.System, *sim.Fleet) {
	t.Helper()
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)}
	publishPrices(t, in.JS, clk.Now())
	fl := sim.New(cfg, clk.Now)
	sys, err := in.System(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, Actuator: fl.Router(), Clock: clk,
		Identity: "test", LeaseTTL: time.Second, Policy: placement.Policy{MaxHedge: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Start(ctx); err != nil {
		t.Fatal(errors.Join(err, sys.Close()))
	}
	return sys, fl
}

func desiredReplicas(ctx context.Context, t *testing.T, fl *sim.Fleet) int {
	t.Helper()
	obs, err := fl.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range obs {
		n += o.Desired
	}
	return n
}

// waitRecorded waits until the recorder has written both prices into the store.
func waitRecorded(ctx context.Context, t *testing.T, st *store.Store) {
	t.Helper()
	q := "SELECT count() AS n FROM " + st.Table("price_observed")
	for {
		out, err := st.Query(ctx, q)
		if err == nil && strings.Contains(string(out), `"n":2`) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the recorder did not write the prices: %s, %v", out, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
