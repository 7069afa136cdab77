package main

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli/clitest"
)

// TestReportRefusesNATSWithoutAuthentication: a report asks the history's owner over NATS; a
// server with no users there is refused, naming --nats-insecure, and not taken for "nobody
// answers" (which would fall back to the store). With --nats-insecure it asks, finds no owner
// and goes on to the store under --data-dir.
func TestReportRefusesNATSWithoutAuthentication(t *testing.T) {
	url := clitest.OpenNATS(t).ClientURL()
	args := []string{"cost", "--period", "1d", "--data-dir", t.TempDir(), "--nats", url, "--fleet", ""}
	_, err := execute(t, args...)
	if err == nil || !strings.Contains(err.Error(), "--nats-insecure") {
		t.Fatalf("report cost against an open NATS = %v, want a refusal naming --nats-insecure", err)
	}
	_, err = execute(t, append(args, "--nats-insecure")...)
	t.Logf("with --nats-insecure: %v", err)
	if err != nil && strings.Contains(err.Error(), "--nats-insecure") {
		t.Fatalf("report cost --nats-insecure = %v, want the server accepted", err)
	}
}
