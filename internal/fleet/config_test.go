package fleet_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

func examplePath(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "bursar.yaml")
}

func TestExampleIsAccepted(t *testing.T) {
	cfg, err := fleet.Load(examplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Locations) != 4 || len(cfg.Workloads) != 2 {
		t.Fatalf("got %d locations and %d workloads, want 4 and 2", len(cfg.Locations), len(cfg.Workloads))
	}
	w, ok := cfg.Workload("chat-llama-8b")
	if !ok {
		t.Fatal("chat-llama-8b missing")
	}
	if w.ColdStart != 3*time.Minute || w.Kubernetes.Object(events.OnDemand) != "chat-llama-8b-od" {
		t.Errorf("chat-llama-8b = %+v", w)
	}
	if r, ok := cfg.Workloads[1].RateFor("H100-80GB"); !ok || r != 829 {
		t.Errorf("summarize-eu on H100-80GB serves %v, %v; want Splitwise's 829 tokens/s", r, ok)
	}
	if l, ok := cfg.Match("aws", "us-west-2", "us-west-2c"); !ok || l.Name != "aws-usw2" {
		t.Errorf("Match(aws, us-west-2, us-west-2c) = %v, %v", l, ok)
	}
	if _, ok := cfg.Match("aws", "us-west-2", "us-west-2b"); ok {
		t.Error("a zone the location does not list matched it")
	}
}

const base = `locations:
  - name: a
    provider: aws
    region: us-east-1
    actuator: {kind: sim}
workloads:
  - name: svc
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 1}
`

func TestBadFilesSayWhereAndWhat(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantLine int
		want     string // a substring of the message
	}{
		{"unknown field", strings.Replace(base, "    region:", "    regoin:", 1), 4, `unknown field "regoin" in a location`},
		{"bad duration", base + "    cold_start: soon\n", 10, "want a duration"},
		{"missing provider", strings.Replace(base, "    provider: aws\n", "", 1), 2, "field locations[0].provider: required"},
		{"unknown actuator", strings.Replace(base, "kind: sim", "kind: ssh", 1), 5, `unknown kind "ssh"`},
		{"max below min", base + "    replicas: {min: 3, max: 2}\n", 0, "mapping key \"replicas\" already defined"},
		{"max below min once", strings.Replace(base, "{min: 1}", "{min: 3, max: 2}", 1), 9, "max 2 is below min 3"},
		{"bad market", base + "    markets: [spot, preemptible]\n", 10, `unknown market "preemptible"`},
		{"no gpu count", strings.Replace(base, "count: 1", "count: 0", 1), 8, "field workloads[0].gpu.count"},
		{"no gpu models, block style", strings.Replace(base, "{models: [H100-80GB], count: 1}", "\n      count: 1", 1), 8,
			"field workloads[0].gpu: give gpu.models"},
		{"webhook without secret", strings.Replace(base, "{kind: sim}", "{kind: webhook, url: 'https://x.example/h'}", 1), 5, "secret_env"},
		{"negative node wait", strings.Replace(base, "{kind: sim}", "{kind: kubernetes, context: c, node_wait: -1m}", 1), 5, "field locations[0].actuator.node_wait: want a duration of 0 (5m) or more"},
		{"kube without object", strings.Replace(base, "{kind: sim}", "{kind: kubernetes, context: c}", 1) + "    markets: [spot]\n", 0, "name the Deployment object that holds spot replicas"},
		{"duplicate workload", base + "  - name: svc\n    gpu: {models: [H100-80GB], count: 1}\n", 10, `workload "svc" is defined twice`},
		{"bad metric", base + "    scaling: {metric: qps, per_replica: 3}\n", 10, `unknown metric "qps"`},
		{"empty", "", 0, "the file is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fleet.Parse([]byte(tt.yaml), "bursar.yaml")
			var fe *fleet.Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *fleet.Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if tt.wantLine > 0 && fe.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", fe.Line, tt.wantLine, err)
			}
			if !strings.HasPrefix(err.Error(), "bursar.yaml") {
				t.Errorf("err = %q does not start with the file name", err)
			}
		})
	}
}

func TestLoadMissingFileSaysWhatToDo(t *testing.T) {
	_, err := fleet.Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "--config") {
		t.Errorf("err = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	if data, err := os.ReadFile(examplePath(f)); err == nil {
		f.Add(data)
	}
	f.Add([]byte("locations: [1, 2]\nworkloads: {}"))
	f.Add([]byte(jobBase))
	f.Add([]byte(twoModels))
	f.Add([]byte(strings.Replace(jobBase, "deadline_in: 52h", "deadline_at: 2026-12-04T06:00:00Z", 1)))
	f.Add([]byte(jobBase + "    replicas: {min: 1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := fleet.Parse(data, "fuzz.yaml")
		if err == nil && (len(cfg.Locations) == 0 || len(cfg.Workloads) == 0) {
			t.Fatal("accepted a fleet with no locations or no workloads")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz.yaml") {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}

// TestKubernetesWithoutContextIsTheArbitersCluster: a kubernetes location naming no context is
// accepted (it was refused): the kube actuator reaches it with the pod's ServiceAccount.
func TestKubernetesWithoutContextIsTheArbitersCluster(t *testing.T) {
	y := strings.Replace(base, "{kind: sim}", "{kind: kubernetes, namespace: llm}", 1) +
		"    kubernetes: {on_demand: svc}\n    markets: [on_demand]\n"
	cfg, err := fleet.Parse([]byte(y), "bursar.yaml")
	if err != nil {
		t.Fatalf("a kubernetes location without context: %v", err)
	}
	if a := cfg.Locations[0].Actuator; a.Context != "" || a.Kubeconfig != "" {
		t.Errorf("actuator = %+v, want neither context nor kubeconfig", a)
	}
}
