// Package promtest runs a real Prometheus for tests: the `prometheus` and `promtool` binaries of
// Debian's prometheus package (apt-get install prometheus; its service need not run). Start
// scrapes the targets a test gives it, with its data in the test's temp dir; Query asks its HTTP
// API; CheckMetrics lints an exposition with `promtool check metrics`. A test skips when the
// binaries are absent, naming the package to install, and fails instead when
// BURSAR_REQUIRE_PROMETHEUS=1 (CI, make e2e).
package promtest

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RequireEnv makes a missing binary a failure instead of a skip.
const RequireEnv = "BURSAR_REQUIRE_PROMETHEUS"

// Binary returns the path of the named program of the prometheus package (prometheus or
// promtool), skipping the test when it is not installed, or failing it under RequireEnv=1.
func Binary(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " is not installed (apt-get install prometheus: Debian's package brings prometheus and promtool)"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s, and %s=1", msg, RequireEnv)
	}
	t.Skip(msg)
	return ""
}

// Promtool runs promtool with args (stdin from in, when given) and returns its combined output
// and error.
func Promtool(t testing.TB, in []byte, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(Binary(t, "promtool"), args...)
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// CheckMetrics runs `promtool check metrics` (the linter of the exposition format and its
// naming conventions) on a /metrics body and returns each problem it reports; none when clean.
func CheckMetrics(t testing.TB, body []byte) []string {
	t.Helper()
	out, err := Promtool(t, body, "check", "metrics")
	var problems []string
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			problems = append(problems, line)
		}
	}
	if err != nil && len(problems) == 0 {
		problems = append(problems, "promtool check metrics: "+err.Error())
	}
	return problems
}
