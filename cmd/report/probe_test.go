package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/health/healthtest"
	"github.com/bursar-dev/bursar/internal/report"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
	"github.com/bursar-dev/bursar/internal/store"
)

// probeChild marks the process that runs TestServeProbesFollowTheBus's body.
const probeChild = "BURSAR_TEST_PROBE_CHILD"

// TestServeProbesFollowTheBus runs "report serve" on its schedule against a store whose owner
// answers over a real NATS server: ready while the owner answers, not while NATS is away (the
// owned store cannot be opened instead), ready again once NATS is back. /metrics carries
// bursar_build_info. It runs in a process of its own: libchdb keeps the first data path a
// process opens, and other tests here open theirs.
func TestServeProbesFollowTheBus(t *testing.T) {
	if os.Getenv(probeChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestServeProbesFollowTheBus$", "-test.count=1")
		cmd.Env = append(os.Environ(), probeChild+"=1")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("the probe test in its own process: %v\n%s", err, out)
		}
		return
	}
	env := bustest.Start(t)
	dataDir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{DataDir: dataDir, Owner: "arbiter test"})
	if err != nil {
		t.Fatalf("making a store to report on: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	owner := make(chan error, 1)
	go func() { owner <- report.Serve(ctx, env.Conn, st, "arbiter test", slog.New(slog.DiscardHandler)) }()
	slack := slacktest.New(t, "xoxb-test")
	t.Setenv("BURSAR_SLACK_API_URL", withAuthTest(t, slack.URL, slack.Token)) // serve checks its token at start
	t.Setenv("BURSAR_SLACK_BOT_TOKEN", slack.Token)
	t.Setenv("BURSAR_SLACK_CHANNEL", "C0REPORTS")
	addr := healthtest.FreeAddr(t)
	done := make(chan error, 1)
	go func() {
		root := newRoot(&cli.Globals{})
		root.SetArgs([]string{"serve", "--report", "cost", "--data-dir", dataDir, "--nats", env.URL, "--fleet", "",
			"--log-level", "error", "--metrics-listen", addr})
		done <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done; <-owner })
	base := "http://" + addr
	healthtest.Await(t, base+"/readyz", http.StatusOK)
	if _, body := healthtest.Get(base + "/metrics"); !strings.Contains(body, "bursar_build_info{") {
		t.Errorf("/metrics lacks bursar_build_info:\n%s", body)
	}
	env.Restart(t, func() {
		if body := healthtest.Await(t, base+"/readyz", http.StatusServiceUnavailable); !strings.Contains(body, "history:") {
			t.Errorf("/readyz with NATS away = %q, want the history check named", body)
		}
		healthtest.Await(t, base+"/livez", http.StatusOK)
	})
	healthtest.Await(t, base+"/readyz", http.StatusOK)
}
