package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jobTrace writes a two-file trace folder on hourly ticks: zone a always has spot, zone b never.
// One window (93 ticks of 3600 s covers 92.33 h) per file.
func jobTrace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{"a": "1", "b": "0"} {
		data := `{"metadata":{"gap_seconds":3600},"data":[` + strings.TrimSuffix(strings.Repeat(v+",", 93), ",") + `]}`
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// execArbiter runs the arbiter's root command with args and returns its output.
func execArbiter(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := root()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestReplayJobsJSON checks the JSON shape and figures. 10 h of work due in 20 h, no overhead:
// in zone a, 10 spot hours ($9.731); in zone b, on-demand once it must ($30.60); od $30.60 in
// both, so greedy costs (9.731 + 30.6)/2 = $20.1655, 65.9 % of on-demand.
func TestReplayJobsJSON(t *testing.T) {
	out, err := execArbiter(t, "replay", "--jobs", "--trace", jobTrace(t), "--policy", "od,greedy",
		"--deadline", "20h", "--work", "10h", "--overhead", "0s", "-o", "json")
	if err != nil {
		t.Fatalf("replay --jobs: %v\n%s", err, out)
	}
	var rep struct {
		Zones   string   `json:"zones"`
		Files   []string `json:"files"`
		Results []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if rep.Zones != "single" || len(rep.Files) != 2 || len(rep.Results) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	for _, key := range []string{"policy", "windows", "mean_cost", "cost_pct_of_on_demand", "deadlines_met_pct"} {
		if _, ok := rep.Results[1][key]; !ok {
			t.Errorf("result has no %q: %v", key, rep.Results[1])
		}
	}
	g := rep.Results[1]
	if g["policy"] != "greedy" || g["windows"] != 2.0 || !nearly(g["mean_cost"], 20.1655) || !nearly(g["deadlines_met_pct"], 100) {
		t.Errorf("greedy = %v, want 2 windows, mean_cost 20.1655, 100 %% met", g)
	}
}

// TestReplayJobsZonesAll: with both zones allowed the job runs on a's spot throughout, and the
// best single zone is a.
func TestReplayJobsZonesAll(t *testing.T) {
	out, err := execArbiter(t, "replay", "--jobs", "--trace", jobTrace(t), "--policy", "greedy",
		"--deadline", "20h", "--work", "10h", "--overhead", "0s", "--zones", "all", "-o", "json")
	if err != nil {
		t.Fatalf("replay --jobs --zones all: %v\n%s", err, out)
	}
	var rep struct{ Results []map[string]any }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r["best_single_zone"] != "a" || !nearly(r["mean_cost"], 9.731) || !nearly(r["best_single_zone_mean_cost"], 9.731) {
		t.Errorf("result = %v, want mean and best zone a at $9.731", r)
	}
}

func nearly(v any, want float64) bool {
	f, ok := v.(float64)
	return ok && f > want-1e-6 && f < want+1e-6
}

// TestReplayJobsErrors: bad input says what is wrong and what to do; an unknown policy lists the
// policies there are, and nothing falls back silently.
func TestReplayJobsErrors(t *testing.T) {
	trace := jobTrace(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown policy", []string{"--policy", "od,cheapest"}, `unknown job policy "cheapest": the policies there are: `},
		{"policy twice", []string{"--policy", "od,od"}, `names "od" twice`},
		{"deadline too short", []string{"--policy", "od", "--deadline", "47h"}, "not even on-demand can meet it"},
		{"fractional seconds", []string{"--policy", "od", "--overhead", "1.5s"}, "whole number of seconds"},
		{"bad zones", []string{"--policy", "od", "--zones", "some"}, `--zones "some": choose single`},
		{"no windows", []string{"--policy", "od", "--windows", "0"}, "at least 1 window"},
		{"serving flag", []string{"--policy", "od", "--tick", "60s"}, "--tick is a serving replay flag"},
		{"missing folder", []string{"--policy", "od", "--trace", filepath.Join(trace, "nope")}, "loading trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"replay", "--jobs", "--trace", trace}, tt.args...)
			out, err := execArbiter(t, args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("arbiter %v: error %v, want one containing %q\n%s", args, err, tt.want, out)
			}
		})
	}
	if _, err := execArbiter(t, "replay", "--trace", trace, "--policy", "spothedge", "--deadline", "52h"); err == nil ||
		!strings.Contains(err.Error(), "add --jobs") {
		t.Errorf("serving replay with --deadline: error %v, want one saying to add --jobs", err)
	}
}

// TestReplayJobsHelpTeaches: --help names --jobs, its flags and the job policies.
func TestReplayJobsHelpTeaches(t *testing.T) {
	out, err := execArbiter(t, "replay", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--jobs", "--deadline", "--overhead", "--zones", "JOBS.md", "uniform-progress", "optimal", "replay --jobs --trace"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay --help does not mention %q", want)
		}
	}
}
