package soak

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// TestClusterKeepsStreamsThroughANodeStopAndACut: R3 streams take writes with one node
// stopped or cut off, and the node catches up when it is back.
func TestClusterKeepsStreamsThroughANodeStopAndACut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := startCluster(t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	nc, js, err := c.connect(ctx, bus.RoleArbiter, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := c.ready(ctx, js); err != nil {
		t.Fatal(err)
	}
	if err := bus.Ensure(ctx, js, bus.Options{Replicas: nodes}); err != nil {
		t.Fatal(err)
	}
	pub, sent := bus.NewPublisher(js), 0
	publish := func(n int) {
		t.Helper()
		for _, e := range eventstest.Sweep("n", n, time.Date(2026, 12, 1, 0, 0, sent, 0, time.UTC)) {
			if err := pub.Publish(ctx, e); err != nil {
				t.Fatalf("event %d: %v", sent, err)
			}
		}
		sent++
	}
	publish(10)
	c.stop(1)
	publish(10)
	if err := c.start(1); err != nil {
		t.Fatal(err)
	}
	if err := c.settled(ctx, js); err != nil {
		t.Fatal(err)
	}
	c.cut(2, true)
	healed := make(chan struct{})
	go func() { // as in the soak: the cut heals on a timer, and what was published through it is kept
		time.Sleep(cutWall)
		c.cut(2, false)
		close(healed)
	}()
	publish(10)
	<-healed
	st, err := js.Stream(ctx, bus.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 30 || info.Config.Replicas != nodes {
		t.Errorf("stream holds %d messages at R%d, want 30 at R%d", info.State.Msgs, info.Config.Replicas, nodes)
	}
}
