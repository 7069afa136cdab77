package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func tinyOptions() Options {
	o := DefaultOptions()
	o.TraceDir = "testdata/tiny"
	o.Target, o.Extra = 1, 0
	o.ColdStart, o.Window, o.Windows = 30*time.Second, 2*time.Minute, 3
	return o
}

func TestRunJSON(t *testing.T) {
	o := tinyOptions()
	o.Policies, o.Output = "on-demand,optimal", "json"
	var out bytes.Buffer
	if err := Run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, out.String())
	}
	if len(got) != 2 {
		t.Fatalf("got %d results, want 2", len(got))
	}
	for _, key := range []string{"policy", "trace", "windows", "availability_pct", "cost_pct_of_on_demand", "availability_pct_per_window", "cost_pct_per_window"} {
		if _, ok := got[0][key]; !ok {
			t.Errorf("result lacks %q: %v", key, got[0])
		}
	}
	if got[0]["policy"] != "on-demand" || got[0]["trace"] != "tiny" || got[0]["windows"] != 3.0 || got[0]["cost_pct_of_on_demand"] != 100.0 {
		t.Errorf("on-demand result = %v", got[0])
	}
	if got[1]["availability_pct"] != 100.0 {
		t.Errorf("optimal availability = %v, want 100", got[1]["availability_pct"])
	}
}

func TestRunTable(t *testing.T) {
	o := tinyOptions()
	o.Policies = "spothedge,round-robin:1"
	var out bytes.Buffer
	if err := Run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "availability %") ||
		!strings.HasPrefix(strings.TrimSpace(lines[2]), "spothedge") || !strings.HasPrefix(strings.TrimSpace(lines[3]), "round-robin:1") {
		t.Errorf("table =\n%s", out.String())
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Options)
		wantErr string
	}{
		{name: "unknown output", edit: func(o *Options) { o.Output = "csv" }, wantErr: `--output "csv": choose table or json`},
		{name: "unknown policy", edit: func(o *Options) { o.Policies = "greedy" }, wantErr: `unknown policy "greedy"`},
		{name: "missing trace", edit: func(o *Options) { o.TraceDir = "" }, wantErr: "--trace is required"},
		{name: "trace folder absent", edit: func(o *Options) { o.TraceDir = "testdata/absent" }, wantErr: "loading trace testdata/absent"},
		{name: "window longer than trace", edit: func(o *Options) { o.Window = time.Hour }, wantErr: "use a shorter --window"},
		{name: "tick not dividing the gap", edit: func(o *Options) { o.Tick = 45 * time.Second }, wantErr: "a.json: malformed trace: gap_seconds 60 is not a multiple of the 45 s tick"},
		{name: "fractional tick", edit: func(o *Options) { o.Tick = 1500 * time.Millisecond }, wantErr: "whole number of seconds"},
		{name: "offset outside the trace", edit: func(o *Options) { o.Offsets = []int{5} }, wantErr: "window offset 5 is outside trace tiny"},
		{name: "zero target", edit: func(o *Options) { o.Target = 0 }, wantErr: "target must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tinyOptions()
			o.Policies = "spothedge"
			tt.edit(&o)
			err := Run(context.Background(), o, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Run() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
