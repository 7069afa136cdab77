package helm_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// The chart renders its alerting rules as a PrometheusRule when monitoring is on.
func init() {
	types["monitoring.coreos.com/v1/PrometheusRule"] = func() any { return &monitoringv1.PrometheusRule{} }
}

// TestPrometheusRuleShipsTheTestedRules: with monitoring on, the chart renders one
// PrometheusRule whose groups are rules/bursar-alerts.yaml's, the file promtool checks and
// unit-tests (internal/promtest's TestRules), with the ServiceMonitors' extra labels so the
// same Prometheus selects both; with monitoring off, none.
func TestPrometheusRuleShipsTheTestedRules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "rules", "bursar-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(b, &want); err != nil {
		t.Fatalf("rules/bursar-alerts.yaml is not a PrometheusRule spec: %v", err)
	}
	objs := render(t, "serviceMonitor: {enabled: true, labels: {release: prometheus}}")
	obj, ok := objs["PrometheusRule/bursar-alerts"]
	if !ok {
		t.Fatal("monitoring on rendered no PrometheusRule/bursar-alerts")
	}
	pr := obj.(*monitoringv1.PrometheusRule)
	if !reflect.DeepEqual(pr.Spec, want) {
		t.Errorf("the rendered rules differ from rules/bursar-alerts.yaml:\n%+v\nwant\n%+v", pr.Spec, want)
	}
	if len(want.Groups) == 0 || len(want.Groups[0].Rules) < 6 {
		t.Errorf("rules/bursar-alerts.yaml: %d groups, want one with the six alerts of issue 31 at least", len(want.Groups))
	}
	if pr.Labels["release"] != "prometheus" {
		t.Errorf("labels %v lack serviceMonitor.labels' release=prometheus", pr.Labels)
	}
	if _, ok := render(t, "")["PrometheusRule/bursar-alerts"]; ok {
		t.Error("monitoring off (the default) rendered a PrometheusRule")
	}
}
