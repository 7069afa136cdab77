package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/gpu"
)

// TestConfigCheck: there was no "collector config check". It validates a file as "collector
// run" would at start, without running anything, with errors naming file:line and field.
func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		file    string
		wantOut string
		wantErr string
	}{
		{"example", filepath.Join("..", "..", "examples", "collector.yaml"), "ok: 2 price sources, 3 reclaim watchers", ""},
		{"scrape only", "location: aws-use1\nscrape:\n  targets:\n    - {url: http://127.0.0.1:8000/metrics, server: vllm, workload: llm}\n",
			"ok: 1 scrape targets", ""},
		{"unknown field", "location: aws-use1\nscrape:\n  targets:\n    - {url: http://h/metrics, server: vllm, workload: llm, colour: red}\n",
			"", ":4: "},
		{"bad value", "location: aws-use1\nscrape:\n  interval: soon\n  targets:\n    - {url: http://h/metrics, server: vllm, workload: llm}\n",
			"", ":3: "},
		{"nothing to run", "location: aws-use1\n", "", "configures nothing to run"},
		{"missing", "", "", "--config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.file
			if !strings.HasSuffix(path, ".yaml") {
				path = filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
				if tt.file != "" {
					writeFile(t, path, tt.file)
				}
			}
			root := newRoot(&cli.Globals{})
			var out, errOut bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errOut)
			root.SetArgs([]string{"config", "check", path})
			err := root.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), filepath.Base(path)) {
					t.Fatalf("config check = %v, want an error naming %s and %q", err, filepath.Base(path), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("config check printed %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}

// TestConfigCheckWarnsWithoutNVML: a collector built without the nvml tag publishes no GPU
// samples; config check says so, and how to build one that does.
func TestConfigCheckWarnsWithoutNVML(t *testing.T) {
	var out, warn bytes.Buffer
	if err := describe(&out, &warn, "c.yaml", Config{GPU: &gpu.Config{}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Contains(warn.String(), "-tags nvml"); got == gpu.NVMLBuilt {
		t.Errorf("NVML built %v, warning %q", gpu.NVMLBuilt, warn.String())
	}
}

// TestPlainBuildHasNoNVML: go-nvml is cgo and its headers print deprecation warnings in every
// plain "go build", "go vet" and "go install". It is built only with -tags nvml.
func TestPlainBuildHasNoNVML(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	for _, tt := range []struct {
		tags string
		want bool
	}{{"", false}, {"nvml", true}} {
		out, err := exec.Command(goTool, "list", "-tags", tt.tags, "-deps", ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		if got := strings.Contains(string(out), "github.com/NVIDIA/go-nvml"); got != tt.want {
			t.Errorf("-tags %q: go-nvml in the build = %v, want %v", tt.tags, got, tt.want)
		}
	}
}
