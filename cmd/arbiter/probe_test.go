package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/health/healthtest"
)

// TestRunProbesFollowTheBus runs a leader and a standby against a real NATS server: both are
// ready (one leads, one can take over), neither is while the server is away, and both are again
// once it is back. /metrics carries bursar_build_info beside the arbiter's series.
func TestRunProbesFollowTheBus(t *testing.T) {
	env := bustest.Start(t)
	var bases []string
	for _, id := range []string{"arbiter-a", "arbiter-b"} {
		addr := healthtest.FreeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- runRoot(ctx, nil, "--nats", env.URL, "--log-level", "error", "run", "--identity", id,
				"--config", "../../examples/demo/bursar.yaml", "--no-history", "--metrics-listen", addr, "--console-listen", "", "--lease-ttl", "2s")
		}()
		t.Cleanup(func() { cancel(); <-done })
		bases = append(bases, "http://"+addr)
	}
	for _, b := range bases {
		healthtest.Await(t, b+"/readyz", http.StatusOK)
	}
	_, body := healthtest.Get(bases[0] + "/metrics")
	for _, want := range []string{"bursar_build_info{", "bursar_arbiter_leader "} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	env.Restart(t, func() {
		for _, b := range bases {
			healthtest.Await(t, b+"/readyz", http.StatusServiceUnavailable)
			healthtest.Await(t, b+"/livez", http.StatusOK)
		}
	})
	for _, b := range bases {
		healthtest.Await(t, b+"/readyz", http.StatusOK)
	}
}

// TestRunStreamReplicasReachJetStream: --stream-replicas sizes the streams; a single server
// cannot hold 3, and the error says which flag asked for them.
func TestRunStreamReplicasReachJetStream(t *testing.T) {
	env := bustest.Start(t)
	err := runRoot(context.Background(), nil, "--nats", env.URL, "--log-level", "error", "run", "--no-history",
		"--metrics-listen", "", "--console-listen", "", "--stream-replicas", "3", "--config", "../../examples/demo/bursar.yaml")
	if err == nil || !strings.Contains(err.Error(), "with --stream-replicas 3") {
		t.Fatalf("arbiter run --stream-replicas 3 on one server = %v, want an error naming the flag", err)
	}
}
