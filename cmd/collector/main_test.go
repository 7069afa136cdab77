package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// TestMain lets a test run this test binary as the collector program itself, so signals reach
// the real main.
func TestMain(m *testing.M) {
	if cfg := os.Getenv("BURSAR_TEST_COLLECTOR_CONFIG"); cfg != "" {
		os.Args = []string{"collector", "run", "--config", cfg, "--nats", os.Getenv("BURSAR_TEST_COLLECTOR_NATS"),
			"--metrics-listen", "127.0.0.1:0"}
		main()
		return
	}
	os.Exit(m.Run())
}

func TestCollectorProcessStopsCleanlyOnSIGTERM(t *testing.T) {
	env := bustest.Start(t)
	page := readShared(t, "provider-formats/fixtures/vllm-metrics.txt")
	vllm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(page) }))
	t.Cleanup(vllm.Close)
	config := filepath.Join(t.TempDir(), "collector.yaml")
	writeFile(t, config, "location: aws-use1\ngpu: {}\nscrape:\n  targets:\n    - {url: "+vllm.URL+", server: vllm, workload: llama-8b}\n")

	sampled := make(chan *nats.Msg, 1)
	sub, err := env.Conn.ChanSubscribe("bursar.tokens.>", sampled)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BURSAR_TEST_COLLECTOR_CONFIG="+config, "BURSAR_TEST_COLLECTOR_NATS="+env.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-sampled: // running: it has scraped and published
	case err := <-exited:
		t.Fatalf("collector exited before publishing: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second): // a hang guard, not a timing assertion
		t.Fatalf("collector published nothing\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("collector exited with %v after SIGTERM, want status 0\n%s", err, stderr.String())
	}
	t.Logf("collector's log:\n%s", stderr.String())
	if !strings.Contains(stderr.String(), "collector stopped") {
		t.Errorf("no clean stop in the log:\n%s", stderr.String())
	}
}
