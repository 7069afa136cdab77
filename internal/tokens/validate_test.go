package tokens

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateRejectsTargetsSharingASeries: two targets with one replica name (given, or the
// URL's host:port by default) publish one series, whose counters then jump between the two
// servers'; the config is rejected, naming both targets.
func TestValidateRejectsTargetsSharingASeries(t *testing.T) {
	target := func(url, replica string) Target {
		return Target{URL: url, Server: VLLM, Location: "a", Workload: "chat", Replica: replica}
	}
	tests := []struct {
		name      string
		targets   []Target
		wantField string // "" when valid
	}{
		{"distinct hosts", []Target{target("http://10.0.0.1:8000/metrics", ""), target("http://10.0.0.2:8000/metrics", "")}, ""},
		{"one name given twice", []Target{target("http://10.0.0.1:8000/metrics", "r1"), target("http://10.0.0.2:8000/metrics", "r1")},
			"targets[1].replica"},
		{"one host twice by default", []Target{target("http://10.0.0.1:8000/metrics", ""), target("http://10.0.0.1:8000/other", "")},
			"targets[1].replica"},
		{"a name equal to another's host", []Target{target("http://10.0.0.1:8000/metrics", ""), target("http://10.0.0.9:8000/metrics", "10.0.0.1:8000")},
			"targets[1].replica"},
		{"same name, other workload", []Target{target("http://10.0.0.1:8000/metrics", "r1"),
			{URL: "http://10.0.0.2:8000/metrics", Server: VLLM, Location: "a", Workload: "embed", Replica: "r1"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Config{Targets: tt.targets}.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.wantField || !strings.Contains(fe.Problem, "targets[0]") {
				t.Errorf("err = %v, want a problem at %s naming targets[0]", err, tt.wantField)
			}
		})
	}
}
