//go:build e2e

package metrics_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/promtest"
	"github.com/bursar-dev/bursar/internal/store/chdb"
)

// root is the repository's root, seen from this package.
var root = filepath.Join("..", "..")

// buildPrograms builds arbiter, collector and report as make does (the nvml tag, cgo) into a
// temp dir and returns it.
func buildPrograms(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chdb.LibraryPath()); err != nil {
		t.Skipf("libchdb.so is not at %s (make setup fetches it): arbiter run records history with it", chdb.LibraryPath())
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-tags", "nvml", "-o", bin+string(filepath.Separator),
		"./cmd/arbiter", "./cmd/collector", "./cmd/report")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the programs: %v\n%s", err, out)
	}
	return bin
}

// demoFleet writes the demo's fleet (examples/demo/bursar.yaml) into dir with every sim launch
// delay cut to 2s, and returns its path. The demo's delays (3 to 5 minutes) are trace time on its
// virtual clock; under `arbiter run` the sim runs on the wall clock, and the test should not wait
// five minutes for the first replica to cost anything.
func demoFleet(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "examples", "demo", "bursar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	delay := regexp.MustCompile(`launch_delay: *[0-9]+m`)
	if len(delay.FindAll(b, -1)) == 0 {
		t.Fatal("examples/demo/bursar.yaml has no launch_delay to shorten: update the test")
	}
	path := filepath.Join(dir, "bursar.yaml")
	if err := os.WriteFile(path, delay.ReplaceAll(b, []byte("launch_delay: 2s")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// collectorConfig writes a collector.yaml publishing the demo's catalog prices (SkyPilot files),
// as the demo does, and returns its path.
func collectorConfig(t *testing.T, dir string) string {
	t.Helper()
	var files []string
	for _, f := range []string{"aws_vms.csv", "gcp_vms.csv"} {
		abs, err := filepath.Abs(filepath.Join(root, "examples", "demo", "prices", f))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fmt.Sprintf("%q", abs))
	}
	cfg := "prices:\n  sources:\n    - kind: skypilot\n      files: [" + strings.Join(files, ", ") + "]\n      schedule: \"@every 1h\"\n"
	path := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeSlack answers auth.test as Slack does for a good bot token: report serve checks its token
// at start. Nothing is posted: the schedule never comes round during the test.
func fakeSlack(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/auth.test") {
			io.WriteString(w, `{"ok":true,"url":"https://test.slack.com/","team":"test","user":"bursar","team_id":"T0","user_id":"U0"}`)
			return
		}
		io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/"
}

// awaitReady polls addr's /readyz until it answers 200.
func awaitReady(t *testing.T, what, addr string) {
	t.Helper()
	promtest.Eventually(t, 2*time.Minute, what+" ready", func() error {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", resp.Status, b)
		}
		return nil
	})
}

// scrape returns addr's /metrics body.
func scrape(t *testing.T, addr string) []byte {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s, %v", addr, resp.Status, err)
	}
	return b
}
