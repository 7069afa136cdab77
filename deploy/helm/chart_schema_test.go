package helm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"sigs.k8s.io/yaml"
)

// schemaNode is the part of a JSON schema these tests walk.
type schemaNode struct {
	Type                 any                    `json:"type"`
	Properties           map[string]*schemaNode `json:"properties"`
	AdditionalProperties any                    `json:"additionalProperties"`
}

// TestSchemaCoversEveryValue: values.schema.json describes every key of values.yaml, and
// refuses keys it does not know in the chart's own objects (a typo such as arbiter.replica
// would otherwise be ignored without a word). Free-form objects (the fleet, collector configs,
// Kubernetes types, maps of labels) are typed and left open.
func TestSchemaCoversEveryValue(t *testing.T) {
	var schema schemaNode
	readJSON(t, filepath.Join(chartDir, "values.schema.json"), &schema)
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v map[string]any, s *schemaNode)
	walk = func(path string, v map[string]any, s *schemaNode) {
		if s.Properties == nil {
			return // a free-form object: fleet, config, resources, affinity, a map of strings
		}
		if s.AdditionalProperties != false {
			t.Errorf("schema of %s admits keys it does not list", path)
		}
		for k, sub := range v {
			p := strings.TrimPrefix(path+"."+k, ".")
			ks, ok := s.Properties[k]
			if !ok {
				t.Errorf("values.yaml has %s, the schema does not", p)
				continue
			}
			if m, ok := sub.(map[string]any); ok {
				walk(p, m, ks)
			}
		}
	}
	walk("", values, &schema)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestSchemaTakesWhatTheProgramsTake: values the programs accept pass the schema.
func TestSchemaTakesWhatTheProgramsTake(t *testing.T) {
	for _, values := range []string{
		`report: {period: 36h}`, `report: {period: 1h30m}`, `report: {period: 2w}`,
		`arbiter: {leaseTTL: 1m30s, slackListen: "0.0.0.0:3000"}`,
		`{slack: {secret: s, channel: C0A, mode: http}, arbiter: {slackListen: ":3000"}}`,
		`arbiter: {podDisruptionBudget: {minAvailable: 1}, replicas: 3}`,
		`nats: {url: "tls://nats-1:4222,tls://nats-2:4222", streamReplicas: 3}`,
	} {
		if _, err := renderFiles(t, values); err != nil {
			t.Errorf("%s: %v", values, err)
		}
	}
}

// TestSchemaRefusesBadValues: a wrong value fails "helm template" and "helm lint" naming it,
// before anything reaches the cluster.
func TestSchemaRefusesBadValues(t *testing.T) {
	for _, tt := range []struct{ values, want string }{
		{`arbiter: {replica: 3}`, "replica"},
		{`arbiter: {replicas: two}`, "/arbiter/replicas"},
		{`arbiter: {replicas: 0}`, "/arbiter/replicas"},
		{`arbiter: {leaseTTL: ten}`, "/arbiter/leaseTTL"},
		{`arbiter: {podDisruptionBudget: {maxUnavailable: 0}}`, "/arbiter/podDisruptionBudget/maxUnavailable"},
		{`report: {mode: weekly}`, "/report/mode"},
		{`report: {schedule: "0 9 * *"}`, "/report/schedule"},
		{`report: {period: a week}`, "/report/period"},
		{`nats: {auth: token}`, "/nats/auth"},
		{`nats: {insecure: "yes"}`, "/nats/insecure"},
		{`slack: {mode: rtm}`, "/slack/mode"},
		{`logLevel: verbose`, "/logLevel"},
		{`extraEnv: {NAME: value}`, "/extraEnv"},
		{`collector: {gpu: {podLabels: {a: 1}}}`, "/collector/gpu/podLabels/a"},
		{`image: {pullPolicy: Sometimes}`, "/image/pullPolicy"},
	} {
		t.Run(tt.values, func(t *testing.T) {
			if _, err := renderFiles(t, tt.values); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render = %v, want a schema error at %s", err, tt.want)
			}
			vals, err := common.ReadValues([]byte(tt.values))
			if err != nil {
				t.Fatal(err)
			}
			var errs []string
			for _, m := range lint.RunAll(chartDir, vals, "bursar").Messages {
				if m.Severity == support.ErrorSev {
					errs = append(errs, m.Error())
				}
			}
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tt.want) }) {
				t.Errorf("helm lint errors = %v, want one at %s", errs, tt.want)
			}
		})
	}
}
