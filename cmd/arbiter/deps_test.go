package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// testHelper matches the packages that exist for tests: ours (internal/testkit and every
// internal/.../*test helper, such as bustest or slacktest) and the standard library's
// net/http/httptest and testing/synctest. It names them precisely: Go's own internal/synctest
// (which sync imports) and client-go's clientcmd/api/latest end in "test" and are neither.
var testHelper = regexp.MustCompile(`^(github\.com/bursar-dev/bursar/internal/(testkit|.*test)|net/http/httptest|testing/synctest)$`)

// TestProgramsLinkNoTestHelpers: arbiter linked internal/testkit and net/http/httptest through
// the soak, which was one of its commands; the soak is its own program now, and what Bursar ships
// (arbiter, collector, report) must link no test helper.
func TestProgramsLinkNoTestHelpers(t *testing.T) {
	if testing.Short() {
		t.Skip("go list -deps loads every package")
	}
	out, err := exec.Command("go", "list", "-tags", "nvml", "-deps", "../arbiter", "../collector", "../report").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if testHelper.MatchString(pkg) {
			t.Errorf("arbiter, collector or report links the test helper %s (go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/... names who imports it)", pkg)
		}
	}
}

func TestTestHelperNamesOnlyTestHelpers(t *testing.T) {
	for pkg, want := range map[string]bool{
		"github.com/bursar-dev/bursar/internal/testkit":         true,
		"github.com/bursar-dev/bursar/internal/bus/bustest":     true,
		"github.com/bursar-dev/bursar/internal/slack/slacktest": true,
		"github.com/bursar-dev/bursar/internal/cli/clitest":     true,
		"net/http/httptest":                               true,
		"testing/synctest":                                true,
		"internal/synctest":                               false,
		"k8s.io/client-go/tools/clientcmd/api/latest":     false,
		"github.com/bursar-dev/bursar/internal/soak":      false,
		"github.com/bursar-dev/bursar/internal/placement": false,
	} {
		if got := testHelper.MatchString(pkg); got != want {
			t.Errorf("testHelper.MatchString(%q) = %v, want %v", pkg, got, want)
		}
	}
}
