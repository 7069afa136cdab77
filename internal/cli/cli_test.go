package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// program is a root like the programs' own, with a sub-command taking --config.
func program(name string, config *string) *cobra.Command {
	var g Globals
	root := Root(name, "test", "test", &g, "", "NATS URL")
	run := &cobra.Command{Use: "run", RunE: func(*cobra.Command, []string) error { return nil }}
	run.Flags().StringVar(config, "config", "default.yaml", "config file")
	root.AddCommand(run)
	return root
}

// TestEnvIsPerProgram: BURSAR_CONFIG was read by both the arbiter and the collector, so a value
// meant for one broke the other. A program's own flags read BURSAR_<PROGRAM>_<FLAG>; only the
// global flags every program shares read BURSAR_<FLAG>.
func TestEnvIsPerProgram(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		wantConfig string
	}{
		{"default", nil, "default.yaml"},
		{"shared name is not read", map[string]string{"BURSAR_CONFIG": "other.yaml"}, "default.yaml"},
		{"another program's is not read", map[string]string{"BURSAR_ARBITER_CONFIG": "bursar.yaml"}, "default.yaml"},
		{"its own", map[string]string{"BURSAR_COLLECTOR_CONFIG": "collector.yaml"}, "collector.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var config string
			root := program("collector", &config)
			root.SetArgs([]string{"run"})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if config != tt.wantConfig {
				t.Errorf("--config = %q, want %q", config, tt.wantConfig)
			}
		})
	}
}

func TestGlobalFlagsReadTheSharedName(t *testing.T) {
	t.Setenv("BURSAR_LOG_LEVEL", "debug")
	var config string
	root := program("report", &config)
	root.SetArgs([]string{"run"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := root.PersistentFlags().Lookup("log-level").Value.String(); got != "debug" {
		t.Errorf("--log-level = %q, want debug from BURSAR_LOG_LEVEL", got)
	}
	DocumentEnv(root)
	run, _, _ := root.Find([]string{"run"})
	if u := run.Flags().Lookup("config").Usage; !strings.Contains(u, "(env BURSAR_REPORT_CONFIG)") {
		t.Errorf("--config help %q does not name BURSAR_REPORT_CONFIG", u)
	}
}

// TestOutputFlagRefusesUnknownFormats while parsing, before a command runs.
func TestOutputFlagRefusesUnknownFormats(t *testing.T) {
	tests := []struct {
		args    []string
		want    string
		wantErr bool
	}{
		{nil, "table", false},
		{[]string{"-o", "yaml"}, "yaml", false},
		{[]string{"--output", "csv"}, "csv", false},
		{[]string{"-o", "xml"}, "", true},
	}
	for _, tt := range tests {
		ran := false
		var out string
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { ran = true; return nil }}
		OutputFlag(cmd, &out, Formats...)
		cmd.SetArgs(tt.args)
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if (err != nil) != tt.wantErr || ran == tt.wantErr {
			t.Errorf("%v: err %v, ran %v; want error %v", tt.args, err, ran, tt.wantErr)
		}
		if !tt.wantErr && out != tt.want {
			t.Errorf("%v: output %q, want %q", tt.args, out, tt.want)
		}
	}
}

// TestWriteYAMLKeepsColumnOrder and types.
func TestWriteYAMLKeepsColumnOrder(t *testing.T) {
	var b bytes.Buffer
	rows := []Row{{"workload": "llm", "ready": 2, "usd_per_hour": 1.5, "zone": "012"}}
	if err := Write(&b, "yaml", []string{"zone", "workload", "ready", "usd_per_hour"}, rows); err != nil {
		t.Fatal(err)
	}
	want := "- zone: \"012\"\n  workload: llm\n  ready: 2\n  usd_per_hour: 1.5\n"
	if b.String() != want {
		t.Errorf("yaml =\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := Write(&b, "yaml", []string{"a"}, nil); err != nil || strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("no rows = %q, %v; want []", b.String(), err)
	}
}

func TestJSONToYAML(t *testing.T) {
	var b bytes.Buffer
	if err := JSONToYAML(&b, []byte(`{"policies":[{"name":"bursar","availability":99.5,"zone":"1"}]}`)); err != nil {
		t.Fatal(err)
	}
	var got map[string][]map[string]any
	if err := yaml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	p := got["policies"][0]
	if p["name"] != "bursar" || p["availability"] != 99.5 || p["zone"] != "1" || strings.Contains(b.String(), "{") {
		t.Errorf("yaml =\n%s", b.String())
	}
}

// TestProgressOffATerminalIsPlainLines: the demo's progress bar wrote \r frames into files and
// pipes. Off a terminal, frames become lines: the first, one per interval and the last.
func TestProgressOffATerminalIsPlainLines(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	w := ProgressWriter(&b) // a buffer is no terminal
	p, ok := w.(*PlainProgress)
	if !ok {
		t.Fatalf("ProgressWriter(buffer) = %T, want *PlainProgress", w)
	}
	p.now = func() time.Time { return now }
	for i := range 25 {
		if _, err := w.Write([]byte("\rreplaying " + strings.Repeat("█", i) + "   ")); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	w.Write([]byte("\rreplayed 100%          \n"))
	w.Write([]byte("demo: done\n"))
	got := b.String()
	if strings.Contains(got, "\r") {
		t.Errorf("output has carriage returns: %q", got)
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := []string{"replaying", "replaying " + strings.Repeat("█", 10), "replaying " + strings.Repeat("█", 20),
		"replayed 100%", "demo: done"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestOr(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := Or(tt.in); got != tt.want {
			t.Errorf("Or(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
