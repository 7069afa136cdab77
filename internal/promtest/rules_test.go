package promtest_test

import (
	"path/filepath"
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
