package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
)

// arbiterCLI runs "arbiter ARGS..." against the NATS server at url, as main wires it.
func arbiterCLI(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	var g cli.Globals
	root := cli.Root("arbiter", "", "", &g, "", "")
	root.AddCommand(newBudgetCmd(&g))
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"--nats", url, "--log-level", "error"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestBudgetCLIRoundTrip(t *testing.T) {
	env := bustest.Start(t)
	run := func(args ...string) string {
		t.Helper()
		out, err := arbiterCLI(t, env.URL, args...)
		if err != nil {
			t.Fatalf("arbiter %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("budget", "set", "llm-monthly", "--actor", "alice", "--scope", "workload=llm-inference",
		"--period", "month", "--limit", "50000", "--currency", "USD", "--alert", "50%,80%,100%",
		"--forecast-alert", "100%", "--on", "100%:block-scale-up", "--on", "120%:scale-to-floor",
		"--approve-over", "25/h", "--approvers", "U123ABC,S456DEF", "--approval-timeout", "30m")

	var got budget.Revision
	if err := json.Unmarshal([]byte(run("budget", "get", "llm-monthly", "-o", "json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Actor != "alice" || got.Policy.Limit != 50000 || len(got.Policy.Thresholds) != 6 || got.Policy.ApproveOver != 25 {
		t.Errorf("get = %+v", got)
	}

	// get -o yaml is what set -f reads: fetch it into "git", edit it, set it back.
	yml := run("budget", "get", "llm-monthly", "-o", "yaml")
	file := filepath.Join(t.TempDir(), "llm.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(yml, "limit: 50000", "limit: 60000", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	run("budget", "set", "-f", file, "--actor", "bob")

	table := run("budget", "list")
	if !strings.Contains(table, "llm-monthly") || !strings.Contains(table, "60000.00") ||
		!strings.Contains(table, "120%:scale-to-floor") || !strings.Contains(table, "forecast 100%") {
		t.Errorf("list:\n%s", table)
	}

	var hist []budget.Revision
	if err := json.Unmarshal([]byte(run("budget", "history", "llm-monthly", "-o", "json")), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Actor != "alice" || hist[1].Actor != "bob" ||
		hist[0].Policy.Limit != 50000 || hist[1].Policy.Limit != 60000 || hist[1].Revision <= hist[0].Revision {
		t.Fatalf("history = %+v", hist)
	}
	if h := run("budget", "history", "llm-monthly", "-o", "yaml"); !strings.Contains(h, "actor: alice") || !strings.Contains(h, "actor: bob") {
		t.Errorf("history yaml:\n%s", h)
	}

	run("budget", "delete", "llm-monthly", "--actor", "carol")
	if out, err := arbiterCLI(t, env.URL, "budget", "get", "llm-monthly"); err == nil || !strings.Contains(err.Error(), "deleted by carol") {
		t.Errorf("get after delete: %v\n%s", err, out)
	}
	if l := run("budget", "list", "-o", "json"); strings.TrimSpace(l) != "[]" {
		t.Errorf("list after delete = %s", l)
	}
	if h := run("budget", "history", "llm-monthly"); strings.Count(h, "llm-monthly") != 3 || !strings.Contains(h, "(deleted)") {
		t.Errorf("history after delete:\n%s", h)
	}
}

func TestBudgetCLIRefusesInvalidPolicies(t *testing.T) {
	env := bustest.Start(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nscope: all\nperiod: day\nlimit: 10\ncurrency: USD\nthresholds: [{at: 80%, action: shout}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"negative limit", []string{"budget", "set", "x", "--scope", "all", "--limit", "-5", "--alert", "80%"}, "limit: must be a positive amount"},
		{"no thresholds", []string{"budget", "set", "x", "--scope", "all", "--limit", "5"}, "thresholds: none given"},
		{"approval without approvers", []string{"budget", "set", "x", "--scope", "all", "--limit", "5", "--alert", "80%", "--approve-over", "3/h"}, "approvers: required"},
		{"bad scope", []string{"budget", "set", "x", "--scope", "cluster=a", "--limit", "5", "--alert", "80%"}, `unknown key "cluster"`},
		{"file with its line", []string{"budget", "set", "-f", bad}, bad + `:6: thresholds[0].action: budget policy "x": "shout"`},
		{"file and flags", []string{"budget", "set", "-f", bad, "--limit", "3"}, "--limit and -f both given"},
		{"bad output", []string{"budget", "list", "-o", "xml"}, `"xml" for "-o, --output" flag: want table, json, yaml or csv`},
		{"missing", []string{"budget", "get", "nope"}, "budget policy not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := arbiterCLI(t, env.URL, append(tt.args, "--actor", "alice")...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q\n%s", err, tt.wantErr, out)
			}
		})
	}
	if out, _ := arbiterCLI(t, env.URL, "budget", "list", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("a refused policy was stored: %s", out)
	}
}
