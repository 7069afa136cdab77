package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
)

func TestBudgetCLIRoundTrip(t *testing.T) {
	env := startBudgetBus(t, "alice", "bob", "carol")
	serveBudgetWrites(t, env.Env)
	as := func(who string) func(...string) string {
		return func(args ...string) string { t.Helper(); return env.mustCLI(t, who, args...) }
	}
	run := as(bus.RoleBudget)
	as("alice")("budget", "set", "llm-monthly", "--scope", "workload=llm-inference",
		"--period", "month", "--limit", "50000", "--currency", "USD", "--alert", "50%,80%,100%",
		"--forecast-alert", "100%", "--on", "100%:block-scale-up", "--on", "120%:scale-to-floor",
		"--approve-over", "25/h", "--restore", "ask", "--approvers", "U123ABC,S456DEF", "--approval-timeout", "30m", "--remedy", "fallback")

	var got budget.Revision
	if err := json.Unmarshal([]byte(run("budget", "get", "llm-monthly", "-o", "json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Actor != "alice" || got.Policy.Limit != 50000 || len(got.Policy.Thresholds) != 6 || got.Policy.ApproveOver != 25 ||
		got.Policy.Restore != budget.RestoreAsk || !got.Policy.Wants(budget.RemedyFallback) {
		t.Errorf("get = %+v", got)
	}

	// get -o yaml is what set -f reads: fetch it into "git", edit it, set it back.
	yml := run("budget", "get", "llm-monthly", "-o", "yaml")
	file := filepath.Join(t.TempDir(), "llm.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(yml, "limit: 50000", "limit: 60000", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(yml, "restore: ask") || !strings.Contains(yml, "- fallback") {
		t.Errorf("get -o yaml lacks the restore key:\n%s", yml)
	}
	as("bob")("budget", "set", "-f", file)

	table := run("budget", "list")
	if !strings.Contains(table, "llm-monthly") || !strings.Contains(table, "60000.00") ||
		!strings.Contains(table, "120%:scale-to-floor") || !strings.Contains(table, "forecast 100%") {
		t.Errorf("list:\n%s", table)
	}
	if csv := run("budget", "list", "-o", "csv"); !strings.Contains(csv, "approve_over,restore,") || !strings.Contains(csv, "25/h,ask,") {
		t.Errorf("list -o csv lacks the restore column:\n%s", csv)
	}
	if csv := run("budget", "list", "-o", "csv"); !strings.Contains(csv, ",remedies,") || !strings.Contains(csv, ",fallback,") {
		t.Errorf("list -o csv lacks the remedies column:\n%s", csv)
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

	as("carol")("budget", "delete", "llm-monthly")
	if out, err := env.cli(t, bus.RoleBudget, "budget", "get", "llm-monthly"); err == nil || !strings.Contains(err.Error(), "deleted by carol") {
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
	env := startBudgetBus(t)
	serveBudgetWrites(t, env.Env)
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
		{"bad restore", []string{"budget", "set", "x", "--scope", "all", "--limit", "5", "--alert", "80%", "--restore", "later"},
			`restore: "later" must be first (a replacement of lost capacity is applied at once and the approvers are told after) or ask`},
		{"file with its line", []string{"budget", "set", "-f", bad}, bad + `:6: thresholds[0].action: budget policy "x": "shout"`},
		{"file and flags", []string{"budget", "set", "-f", bad, "--limit", "3"}, "--limit and -f both given"},
		{"bad remedy", []string{"budget", "set", "x", "--scope", "all", "--limit", "5", "--alert", "80%", "--approvers", "U123ABC", "--remedy", "spot"},
			`--remedy: "spot" is not a remedy`},
		{"remedy without approvers", []string{"budget", "set", "x", "--scope", "all", "--limit", "5", "--alert", "80%", "--remedy", "fallback"},
			"approvers: required when remedies are proposed"},
		{"file and --remedy", []string{"budget", "set", "-f", bad, "--remedy", "fallback"}, "--remedy and -f both given"},
		{"file and --restore", []string{"budget", "set", "-f", bad, "--restore", "ask"}, "--restore and -f both given"},
		{"bad output", []string{"budget", "list", "-o", "xml"}, `"xml" for "-o, --output" flag: want table, json, yaml or csv`},
		{"missing", []string{"budget", "get", "nope"}, "budget policy not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := env.cli(t, bus.RoleBudget, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q\n%s", err, tt.wantErr, out)
			}
		})
	}
	if out, _ := env.cli(t, bus.RoleBudget, "budget", "list", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("a refused policy was stored: %s", out)
	}
}

// TestBudgetActorIsTheNATSIdentity: `budget set` records the NATS identity the server
// authenticated (the embedded budget role, or a person's user), whatever the OS user; naming
// another identity is refused by the server, and the old self-declared --actor is refused too.
// Nothing refused is stored.
func TestBudgetActorIsTheNATSIdentity(t *testing.T) {
	env := startBudgetBus(t, "alice")
	serveBudgetWrites(t, env.Env)
	t.Setenv("USER", "mallory")
	set := func(as, name string, extra ...string) (string, error) {
		return env.cli(t, as, append([]string{"budget", "set", name, "--scope", "all", "--limit", "5", "--alert", "80%"}, extra...)...)
	}
	tests := []struct {
		name, as  string
		extra     []string
		wantActor string // "" when refused
		wantErr   string
	}{
		{"the budget role", bus.RoleBudget, nil, bus.RoleBudget, ""},
		{"a person's user", "alice", nil, "alice", ""},
		{"the budget role naming alice", bus.RoleBudget, []string{"--nats-identity", "alice"}, "", `the NATS server refused "alice" a budget write`},
		{"alice naming the arbiter", "alice", []string{"--nats-identity", "arbiter"}, "", `the NATS server refused "arbiter" a budget write`},
		{"a self-declared actor", bus.RoleBudget, []string{"--actor", "alice"}, "", "--actor is gone: the history records the NATS identity"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "p" + strconv.Itoa(i)
			out, err := set(tt.as, name, tt.extra...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q\n%s", err, tt.wantErr, out)
				}
				if h, err := env.cli(t, bus.RoleBudget, "budget", "history", name); err == nil {
					t.Fatalf("a refused change was stored:\n%s", h)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v\n%s", err, out)
			}
			if !strings.Contains(out, "by "+tt.wantActor) {
				t.Errorf("output %q does not say it was set by %s", out, tt.wantActor)
			}
			var hist []budget.Revision
			if err := json.Unmarshal([]byte(env.mustCLI(t, bus.RoleBudget, "budget", "history", name, "-o", "json")), &hist); err != nil {
				t.Fatal(err)
			}
			if len(hist) != 1 || hist[0].Actor != tt.wantActor {
				t.Fatalf("history = %+v, want one revision by %s", hist, tt.wantActor)
			}
		})
	}
}
