package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfigNamesFileLineAndField(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // the error's start: file:line: and the field
	}{
		{
			name: "unknown top-level key",
			yaml: "location: aws-use1\nwatcher:\n  aws_imds: {}\n",
			want: `collector.yaml:2: unknown field "watcher"`,
		},
		{
			name: "unknown key inside a watcher",
			yaml: "location: aws-use1\nwatchers:\n  aws_imds:\n    intervall: 5s\n",
			want: `collector.yaml:4: unknown field "watchers.aws_imds.intervall"`,
		},
		{
			name: "bad duration",
			yaml: "location: aws-use1\ngpu:\n  interval: fast\n",
			want: `collector.yaml:3: field "gpu.interval": cannot unmarshal`,
		},
		{
			name: "reclaim Validate field mapped to its line",
			yaml: "location: aws-use1\nwatchers:\n  gcp_metadata:\n    endpoint: metadata.local\n",
			want: `collector.yaml:4: field "watchers.gcp_metadata.endpoint": must be an http(s) URL`,
		},
		{
			name: "missing location points at its section",
			yaml: "prices:\n  sources: []\ngpu:\n  interval: 5s\n",
			want: `collector.yaml:3: field "gpu.location": must name the Bursar location`,
		},
		{
			name: "scrape target field inside a list",
			yaml: "location: x\nscrape:\n  targets:\n    - url: http://a:8000/metrics\n      server: vllm\n      workload: w\n" +
				"    - url: http://b:8000/metrics\n      server: triton\n      workload: w\n",
			want: `collector.yaml:8: field "scrape.targets[1].server": must be vllm or tgi`,
		},
		{
			name: "negative duration from Validate",
			yaml: "location: x\nwatchers:\n  azure_scheduled_events:\n    timeout: -1s\n",
			want: `collector.yaml:4: field "watchers.azure_scheduled_events.timeout": must not be negative`,
		},
		{
			name: "price source error keeps its line in the whole file",
			yaml: "location: x\n\n# prices\nprices:\n  sources:\n    - kind: skypilot\n      files: [a.csv]\n    - kind: azure\n      schedule: \"@hourly\"\ngpu: {}\n",
			want: `collector.yaml:8: source 2, field "region": required for kind azure`,
		},
		{
			name: "unknown key in the prices section keeps its line",
			yaml: "location: x\ngpu: {}\nprices:\n  snapshot: \"@every 6h\"\n  sourcs: []\n",
			want: `collector.yaml:5: field sourcs not found`,
		},
		{
			name: "a section with no value",
			yaml: "location: x\nwatchers:\n  aws_imds:\n",
			want: `collector.yaml:3: field "watchers.aws_imds" has no value`,
		},
		{
			name: "unset environment variable in node",
			yaml: "location: x\nnode: ${BURSAR_TEST_SURELY_UNSET}\ngpu: {}\n",
			want: `collector.yaml:2: field "node": names $BURSAR_TEST_SURELY_UNSET`,
		},
		{
			name: "a tab in the indentation",
			yaml: "location: x\nscrape:\n\ttargets: []\n",
			want: `collector.yaml:3: found character that cannot start any token`,
		},
		{
			name: "nothing to run",
			yaml: "location: x\n",
			want: `collector.yaml: configures nothing to run`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml), "collector.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v\nwant it to start with %s", err, tt.want)
			}
		})
	}
}

func TestParseConfigAppliesNodeAndLocationDefaults(t *testing.T) {
	t.Setenv("BURSAR_TEST_NODE", "gpu-node-7")
	cfg, err := ParseConfig([]byte(`
node: ${BURSAR_TEST_NODE}
location: aws-use1
watchers:
  aws_imds: {}
  gcp_metadata: {location: gcp-usc1}
  aws_eventbridge: {queue_url: "https://sqs.us-east-1.amazonaws.com/1/q", region: us-east-1, locations: {us-west-2: aws-usw2}}
gpu: {interval: 20s}
scrape:
  targets:
    - {url: "http://10.0.0.1:8000/metrics", server: vllm, workload: llama}
    - {url: "http://10.0.0.2:8000/metrics", server: tgi, workload: llama, location: aws-use2}
`), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Watchers
	tests := []struct {
		name, got, want string
	}{
		{"aws_imds location", w.AWS.Location, "aws-use1"},
		{"aws_imds node from the environment", w.AWS.Node, "gpu-node-7"},
		{"gcp_metadata keeps its own location", w.GCP.Location, "gcp-usc1"},
		{"eventbridge with locations gets no fallback", w.AWSEvents.Location, ""},
		{"gpu location", cfg.GPU.Location, "aws-use1"},
		{"gpu node", cfg.GPU.Node, "gpu-node-7"},
		{"first target's location", cfg.Scrape.Targets[0].Location, "aws-use1"},
		{"second target keeps its own", cfg.Scrape.Targets[1].Location, "aws-use2"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if cfg.GPU.Interval != 20*time.Second || w.Azure != nil || cfg.Prices != nil {
		t.Errorf("gpu interval %s, azure %v, prices %v; want 20s, off, off", cfg.GPU.Interval, w.Azure, cfg.Prices)
	}
}

func TestExampleConfigParses(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "collector.yaml")
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Watchers
	if cfg.Prices == nil || len(cfg.Prices.Sources) != 2 || w.AWS == nil || w.GCP == nil || w.Azure == nil ||
		cfg.GPU == nil || cfg.Scrape == nil || len(cfg.Scrape.Targets) != 2 {
		t.Fatalf("example config is missing a kind: %+v", cfg)
	}
	// The example runs from the repository root on files the repository holds.
	got := cfg.Prices.Sources[0].Files[0]
	if _, err := os.Stat(filepath.Join("..", "..", got)); err != nil {
		t.Errorf("skypilot source reads %s, which is not in the repository: %v", got, err)
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("error = %v, want one naming --config", err)
	}
}

// FuzzParseConfig: any file either parses or fails with an error that starts with its name.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "..", "examples", "collector.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("location: x\nprices:\n  sources:\n    - kind: azure\n      region: eastus\n"))
	f.Add([]byte("watchers:\n  aws_imds:\n    interval: -1s\n"))
	f.Add([]byte("prices: {sources: [{kind: skypilot}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParseConfig(data, "f.yaml")
		if err != nil && !strings.HasPrefix(err.Error(), "f.yaml") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
