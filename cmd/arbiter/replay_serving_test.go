package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeDemand writes a per-minute demand CSV of n minutes at tokens output tokens a minute.
func writeDemand(t *testing.T, n int, tokens string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("minute,requests,input_tokens,output_tokens\n")
	for m := range n {
		b.WriteString(strings.Join([]string{strconv.Itoa(m), "10", "1000", tokens}, ",") + "\n")
	}
	path := filepath.Join(t.TempDir(), "demand.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplayServingRefusesBadFlags(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("minute,requests,input_tokens,output_tokens\n0,1,2,3\n2,1,2,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		wantIn string
	}{
		{"replica flag", []string{"--serving", "--trace", "x"}, "--trace applies to the replica replay"},
		{"replica target", []string{"--serving", "--target", "4"}, "--target applies to the replica replay"},
		{"job flag", []string{"--serving", "--deadline", "5h"}, "--deadline applies to job replays"},
		{"serving flag without --serving", []string{"--trace", "x", "--policy", "spothedge", "--demand", "d.csv"}, "--demand applies to serving replays"},
		{"unknown policy", []string{"--serving", "--policy", "od-autoscale,nope"}, `unknown policy "nope"`},
		{"twice", []string{"--serving", "--policy", "skyserve,skyserve"}, "listed twice"},
		{"negative scale", []string{"--serving", "--demand-scale", "-1"}, "--demand-scale -1"},
		{"zero tpot", []string{"--serving", "--tpot-ms", "0"}, "--tpot-ms 0"},
		{"negative cold start", []string{"--serving", "--cold-start", "-1m"}, "--cold-start -1m0s"},
		{"window under a tick", []string{"--serving", "--window", "30s"}, "--window 30s: want at least 1m"},
		{"missing demand", []string{"--serving", "--demand", "/nonexistent/d.csv"}, "/nonexistent/d.csv"},
		{"malformed demand", []string{"--serving", "--demand", bad, "--data", sharedDataDir(t)}, bad + ":3: malformed input: minute 2 follows minute 0"},
		{"bad output", []string{"--serving", "-o", "csv"}, "csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := execArbiter(t, append([]string{"replay"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("err = %v, want one containing %q\n%s", err, tc.wantIn, out)
			}
		})
	}
}

// sharedDataDir is ../shared/data from this package (the tests that read it skip without it).
func sharedDataDir(t *testing.T) string {
	dir := filepath.Join("..", "..", "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(dir, "serving")); err != nil {
		t.Skipf("the serving inputs live in ../shared/data/serving beside the repository: %v", err)
	}
	return dir
}

// TestReplayServingJSON runs the replay on a flat demand file with the real capacity and prices:
// the JSON names every metric the issue asks for, per policy.
func TestReplayServingJSON(t *testing.T) {
	data := sharedDataDir(t)
	demand := writeDemand(t, 3000, "600000") // 10,000 tok/s before scaling
	out, err := execArbiter(t, "replay", "--serving", "--data", data, "--demand", demand,
		"--policy", "od-autoscale,skyserve", "--windows", "2", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got struct {
		Runs []struct {
			Demand  string           `json:"demand"`
			Offsets []int            `json:"offsets"`
			Results []map[string]any `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Runs) != 1 || len(got.Runs[0].Results) != 2 || len(got.Runs[0].Offsets) != 2 {
		t.Fatalf("want one run of two policies over two windows, got %s", out)
	}
	for _, res := range got.Runs[0].Results {
		for _, key := range []string{"cost_usd_per_million_tokens", "cost_pct_of_od_autoscale", "capacity_availability_pct",
			"unserved_tokens_pct", "spot_share_pct", "moves_per_hour", "gpu_hours_by_type"} {
			if _, ok := res[key]; !ok {
				t.Errorf("%v lacks %s", res["policy"], key)
			}
		}
	}
	if od := got.Runs[0].Results[0]; od["policy"] != "od-autoscale" || od["cost_pct_of_od_autoscale"] != 100.0 {
		t.Errorf("od-autoscale is its own reference: %v", od)
	}
}
