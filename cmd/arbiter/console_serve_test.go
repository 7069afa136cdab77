package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A console on an address other than loopback without TLS is refused before anything opens,
// naming the flags that would make it safe.
func TestRunRefusesAPlainConsoleOffLoopback(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"--console-listen", "0.0.0.0:9470"},
		{"--console-listen", "127.0.0.1:9470", "--console-tls-cert", "cert.pem"},
		{"--console-listen", "127.0.0.1:9470", "--console-trusted-header", "X-Forwarded-Email"},
	} {
		dir := filepath.Join(t.TempDir(), "d")
		err := runRoot(context.Background(), nil, append([]string{"--data-dir", dir, "--log-level", "error",
			"run", "--metrics-listen", ""}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "--console-") {
			t.Errorf("arbiter run %v = %v, want a refusal naming the console's flags", args, err)
		}
		if _, serr := os.Stat(dir); serr == nil {
			t.Errorf("arbiter run %v made its data dir before refusing", args)
		}
	}
}

// consoleChild marks the process that runs TestRunServesTheConsole's body.
const consoleChild = "BURSAR_TEST_CONSOLE_CHILD"

// arbiter run with the demo fleet serves the console on --console-listen: the fleet page and
// the API's fleet answer, with their window. It runs in a process of its own: libchdb keeps the
// first data path a process opens.
func TestRunServesTheConsole(t *testing.T) {
	if os.Getenv(consoleChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRunServesTheConsole$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), consoleChild+"=1")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("the console test in its own process: %v\n%s", err, out)
		}
		return
	}
	fleet, err := filepath.Abs("../../examples/demo/bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	addr, web := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runRoot(ctx, nil, "--data-dir", "data", "--log-level", "error", "run", "--listen", addr,
			"--metrics-listen", "", "--config", fleet, "--console-listen", web)
	}()
	t.Cleanup(func() { cancel(); <-done })
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + web + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	deadline := time.Now().Add(60 * time.Second)
	for code, _ := get("/"); code != http.StatusOK; code, _ = get("/") {
		if time.Now().After(deadline) {
			t.Fatalf("the console never answered on %s", web)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := get("/"); code != http.StatusOK || !strings.Contains(body, `data-test="table-fleet"`) && !strings.Contains(body, `data-test="empty"`) {
		t.Errorf("GET / = %d, want the fleet page:\n%.2000s", code, body)
	}
	code, body := get("/api/v1/fleet")
	var answer struct {
		Report string
		Window struct{ Since, Until time.Time }
	}
	if err := json.Unmarshal([]byte(body), &answer); code != http.StatusOK || err != nil || answer.Report != "fleet" || answer.Window.Since.IsZero() {
		t.Errorf("GET /api/v1/fleet = %d %v, want the fleet report with its window:\n%.2000s", code, err, body)
	}
}
