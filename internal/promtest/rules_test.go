package promtest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/promtest"
)

// rulesDir holds the chart's alerting rules and their promtool unit tests.
var rulesDir = filepath.Join("..", "..", "deploy", "helm", "bursar", "rules")

// TestRules: the chart's alerting rules pass `promtool check rules` (syntax, PromQL, templates)
// and their unit tests (`promtool test rules`: each alert fires on the series that should fire
// it and on no other).
func TestRules(t *testing.T) {
	rules := filepath.Join(rulesDir, "bursar-alerts.yaml")
	if out, err := promtest.Promtool(t, nil, "check", "rules", rules); err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", rules, err, out)
	}
	tests := filepath.Join(rulesDir, "bursar-alerts_test.yaml")
	if out, err := promtest.Promtool(t, nil, "test", "rules", tests); err != nil {
		t.Fatalf("promtool test rules %s: %v\n%s", tests, err, out)
	}
}

// TestRulesReadExportedMetrics: every bursar_* series the rules read is one a program exports
// (its name is a string in the programs' code), so a renamed metric cannot leave an alert that
// never fires; the unit tests alone would pass on made-up names.
func TestRulesReadExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(rulesDir, "bursar-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(t, filepath.Join("..", ".."))
	var expr strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if s := strings.TrimSpace(line); !strings.HasPrefix(s, "#") {
			expr.WriteString(line + "\n")
		}
	}
	read := regexp.MustCompile(`bursar_[a-z_]+`).FindAllString(expr.String(), -1)
	if len(read) == 0 {
		t.Fatal("the rules read no bursar_ series")
	}
	for _, name := range read {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
		if !exported[base] {
			t.Errorf("the rules read %s, which no program exports", name)
		}
	}
}

// exportedNames are the "bursar_..." string literals of the non-test Go code under root's cmd
// and internal.
func exportedNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	lit := regexp.MustCompile(`"(bursar_[a-z_]+)"`)
	out := map[string]bool{}
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			src, err := os.ReadFile(p)
			for _, m := range lit.FindAllStringSubmatch(string(src), -1) {
				out[m[1]] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
