package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli/clitest"
	"github.com/bursar-dev/bursar/internal/health/healthtest"
)

// TestRunRefusesNATSWithoutAuthentication: "arbiter run" against a NATS server with no users
// refuses before it creates a stream, naming --nats-insecure and what is at stake; with
// --nats-insecure it runs and becomes ready on that server.
func TestRunRefusesNATSWithoutAuthentication(t *testing.T) {
	t.Chdir(t.TempDir()) // no ./bursar.yaml
	open := clitest.OpenNATS(t)
	args := []string{"--nats", open.ClientURL(), "--log-level", "error", "run", "--no-history", "--console-listen", ""}
	err := runRoot(context.Background(), nil, append(args, "--metrics-listen", "")...)
	if err == nil || !strings.Contains(err.Error(), "--nats-insecure") || !strings.Contains(err.Error(), "act as any Bursar role") {
		t.Fatalf("arbiter run against an open NATS = %v, want a refusal naming --nats-insecure and the risk", err)
	}
	if n := open.GlobalAccount().JetStreamUsage().Streams; n != 0 {
		t.Errorf("the refused arbiter created %d streams", n)
	}

	addr := healthtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runRoot(ctx, nil, append(args, "--metrics-listen", addr, "--nats-insecure")...) }()
	t.Cleanup(func() { cancel(); <-done })
	healthtest.Await(t, "http://"+addr+"/readyz", http.StatusOK)
}
