package fleet_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// TestBoundsAndNamesSayWhereAndWhat: a fleet file that asks for more replicas than the planner
// plans, a GPU no offer carries, or a residency no location has is rejected at config check,
// naming the line, the field and what to write instead.
func TestBoundsAndNamesSayWhereAndWhat(t *testing.T) {
	withUS := strings.Replace(base, "    actuator: {kind: sim}", "    residency: [us, gdpr]\n    actuator: {kind: sim}", 1)
	tests := []struct {
		name      string
		yaml      string
		wantLine  int
		wantField string
		want      []string // substrings of the message
	}{
		{"a billion replicas", strings.Replace(base, "{min: 1}", "{min: 1000000000}", 1), 9, "workloads[0].replicas.min",
			[]string{"at most 10000 replicas per workload"}},
		{"just over the limit", strings.Replace(base, "{min: 1}", "{min: 10001}", 1), 9, "workloads[0].replicas.min",
			[]string{"at most 10000"}},
		{"max over the limit", strings.Replace(base, "{min: 1}", "{min: 1, max: 100000}", 1), 9, "workloads[0].replicas.max",
			[]string{"at most 10000"}},
		{"negative max", strings.Replace(base, "{min: 1}", "{min: 0, max: -1}", 1), 9, "workloads[0].replicas.max",
			[]string{"0 (no bound beyond demand) or more"}},
		{"model that does not exist", strings.Replace(base, "[H100-80GB]", "[H900-1TB]", 1), 8, "workloads[0].gpu.models[0]",
			[]string{`unknown GPU model "H900-1TB"`, "the nearest known are", "H100-80GB"}},
		{"wrong case", strings.Replace(base, "[H100-80GB]", "[h100-80gb]", 1), 8, "workloads[0].gpu.models[0]",
			[]string{"case-sensitive", "did you mean H100-80GB?"}},
		{"typo", strings.Replace(base, "[H100-80GB]", "[L4, H100-80G]", 1), 8, "workloads[0].gpu.models[1]",
			[]string{`unknown GPU model "H100-80G"`, "nearest known are H100-80GB"}},
		{"ambiguous", strings.Replace(base, "[H100-80GB]", "[A100]", 1), 8, "workloads[0].gpu.models[0]",
			[]string{`ambiguous GPU model "A100"`, "A100-40GB or A100-80GB"}},
		{"one size only", strings.Replace(base, "[H100-80GB]", "[H200]", 1), 8, "workloads[0].gpu.models[0]",
			[]string{"did you mean H200-141GB?"}},
		{"memory no GPU has", strings.Replace(base, "{models: [H100-80GB], count: 1}", "{min_memory_gb: 800, count: 1}", 1), 8,
			"workloads[0].gpu.min_memory_gb", []string{"no known GPU has 800 GB", "the largest is MI300X"}},
		{"residency nobody has", base + "    residency: [eu]\n", 10, "workloads[0].residency",
			[]string{"no location satisfies residency eu", "no location carries a residency tag"}},
		{"residency others have", withUS + "    residency: [eu, de]\n", 11, "workloads[0].residency",
			[]string{"no location satisfies residency eu, de", "the locations carry gdpr, us"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fleet.Parse([]byte(tt.yaml), "bursar.yaml")
			var fe *fleet.Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *fleet.Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(fe.Msg, w) {
					t.Errorf("msg = %q, want it to contain %q", fe.Msg, w)
				}
			}
			if fe.Line != tt.wantLine || fe.Field != tt.wantField {
				t.Errorf("at %d, %s; want %d, %s (%v)", fe.Line, fe.Field, tt.wantLine, tt.wantField, err)
			}
		})
	}
}

// TestBoundsAcceptWhatIsValid: the limit itself, every memory size of a model listed, and a
// residency one location has all pass.
func TestBoundsAcceptWhatIsValid(t *testing.T) {
	withUS := strings.Replace(base, "    actuator: {kind: sim}", "    residency: [us]\n    actuator: {kind: sim}", 1)
	tests := []struct {
		name string
		yaml string
	}{
		{"at the limit", strings.Replace(base, "{min: 1}", "{min: 10000, max: 10000}", 1)},
		{"both A100 sizes", strings.Replace(base, "[H100-80GB]", "[A100-40GB, A100-80GB]", 1)},
		{"a canonical name that prefixes others", strings.Replace(base, "[H100-80GB]", "[A10, L40, RTX6000]", 1)},
		{"memory instead of models", strings.Replace(base, "{models: [H100-80GB], count: 1}", "{min_memory_gb: 80, count: 1}", 1)},
		{"residency one location has", withUS + "    residency: [eu, us]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := fleet.Parse([]byte(tt.yaml), "bursar.yaml"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDocsListEveryGPUModel: the error for an unknown model sends the user to docs/fleet.md, so
// it must list every canonical name.
func TestDocsListEveryGPUModel(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(examplePath(t)), "..", "docs", "fleet.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range pricing.GPUs() {
		if !strings.Contains(string(doc), g.Name+" (") {
			t.Errorf("docs/fleet.md does not list %s", g.Name)
		}
	}
}
