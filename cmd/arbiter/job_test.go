package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/cli/clitest"
	fleetfile "github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/jobs"
)

const jobFleet = `locations:
  - {name: a, provider: aws, region: us-east-1, residency: [us], actuator: {kind: sim}}
workloads:
  - {name: svc, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 1}}
`

const jobFile = `name: finetune-7b
gpu: {models: [H100-80GB], count: 1}
markets: [spot, on_demand]
job: {work: 48h, deadline_in: 52h, overhead: 3m}
`

// jobBus is a real NATS server with the arbiter's answer to job requests, and the CLI run as
// main wires it, connected as the budget role with the key the embedded server wrote.
type jobBus struct {
	*bustest.Env
	at time.Time
}

func startJobBus(t *testing.T) *jobBus {
	t.Helper()
	env := bustest.Start(t)
	ctx := context.Background()
	if err := bus.Ensure(ctx, env.JS, bus.Options{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := fleetfile.Parse([]byte(jobFleet), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := &jobBus{Env: env, at: time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)}
	sub, err := jobs.Serve(ctx, env.JS, cfg, func() time.Time { return b.at }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return b
}

func (b *jobBus) cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var g cli.Globals
	root := cli.Root("arbiter", "", "", &g, "", "")
	root.AddCommand(newJobCmd(&g))
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"--nats", b.Server.ClientURL(), "--log-level", "error",
		"--nats-nkey", bus.SeedFile(b.CredsDir, bus.RoleBudget)}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestJobCommands: submit from a file and from flags, status as a table and JSON, cancel, each
// over the bus as the CLI's role (there was no "arbiter job").
func TestJobCommands(t *testing.T) {
	b := startJobBus(t)
	file := filepath.Join(t.TempDir(), "finetune.yaml")
	if err := os.WriteFile(file, []byte(jobFile), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := b.cli(t, "job", "submit", "-f", file)
	if err != nil || !strings.Contains(out, `job "finetune-7b" submitted at 2026-12-02T03:00:00Z by budget; due 2026-12-04T07:00:00Z`) {
		t.Fatalf("submit -f: %v\n%s", err, out)
	}
	out, err = b.cli(t, "job", "submit", "--name", "eval", "--gpu", "H100-80GB", "--work", "2h",
		"--deadline", "2026-12-02T09:00:00Z", "--markets", "spot", "--priority", "3")
	if err != nil || !strings.Contains(out, `job "eval" submitted`) || !strings.Contains(out, "due 2026-12-02T09:00:00Z") {
		t.Fatalf("submit --name: %v\n%s", err, out)
	}
	out, err = b.cli(t, "job", "status", "-o", "json")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("status -o json = %s (%v), want two jobs", out, err)
	}
	if rows[0]["job"] != "eval" || rows[1]["job"] != "finetune-7b" || rows[1]["work_h"] != 48.0 || rows[1]["state"] != "submitted" {
		t.Errorf("status rows = %v", rows)
	}
	if _, err := b.cli(t, "job", "cancel", "eval"); err != nil {
		t.Fatal(err)
	}
	out, err = b.cli(t, "job", "status", "eval")
	if err != nil || !strings.Contains(out, "cancelled") {
		t.Errorf("status eval after cancel: %v\n%s", err, out)
	}
}

// TestJobCommandErrorsSayWhatToDo: each refusal names what is wrong and where.
func TestJobCommandErrorsSayWhatToDo(t *testing.T) {
	b := startJobBus(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(jobFile, "work: 48h", "work: 2 days", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	eu := filepath.Join(dir, "eu.yaml")
	if err := os.WriteFile(eu, []byte(jobFile+"residency: [eu]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad file", []string{"job", "submit", "-f", bad}, bad + ":4: cannot unmarshal"},
		{"file and flags", []string{"job", "submit", "-f", bad, "--name", "x"}, "--name and -f both given"},
		{"bad deadline", []string{"job", "submit", "--name", "x", "--gpu", "H100-80GB", "--work", "1h", "--deadline", "friday"}, `--deadline "friday"`},
		{"no work", []string{"job", "submit", "--name", "x", "--gpu", "H100-80GB", "--deadline", "2h"}, `job "x": job.work: want the compute`},
		{"no location fits", []string{"job", "submit", "-f", eu}, "no location satisfies residency eu"},
		{"workload's name", []string{"job", "submit", "--name", "svc", "--gpu", "H100-80GB", "--work", "1h", "--deadline", "2h"}, "has that name"},
		{"unknown job", []string{"job", "cancel", "nope"}, `no job "nope" is submitted`},
		{"unknown status", []string{"job", "status", "nope"}, `no job "nope" is submitted`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := b.cli(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("arbiter %v: err = %v, want it to contain %q\n%s", tt.args, err, tt.want, out)
			}
		})
	}
}

// TestJobFileMatchesTheFleetSchema: a job as the docs write it is a valid workload of the
// published schema, inside a fleet file.
func TestJobFileMatchesTheFleetSchema(t *testing.T) {
	s := clitest.CompileSchema(t, fleetSchema)
	dir := t.TempDir()
	file := filepath.Join(dir, "bursar.yaml")
	indented := "  - " + strings.ReplaceAll(strings.TrimSuffix(jobFile, "\n"), "\n", "\n    ") + "\n    kind: job\n"
	if err := os.WriteFile(file, []byte("# yaml-language-server: $schema=bursar.schema.json\n"+jobFleet+indented), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := fleetfile.Load(file); err != nil {
		t.Fatal(err)
	}
	clitest.ValidateYAML(t, s, file, "bursar.schema.json")
}

// TestJobSubmitWithoutAFleetArbiterSaysWhatIsMissing: against an arbiter running without a fleet
// (it answers budget writes, not jobs) "job submit" said "no responders available (is "arbiter
// run" up?)" though the arbiter was up. It says that an arbiter with a fleet file is missing.
func TestJobSubmitWithoutAFleetArbiterSaysWhatIsMissing(t *testing.T) {
	env := bustest.Start(t)
	if err := bus.Ensure(context.Background(), env.JS, bus.Options{}); err != nil {
		t.Fatal(err)
	}
	serveBudgetWrites(t, env) // what "arbiter run" without a fleet answers
	b := &jobBus{Env: env}
	out, err := b.cli(t, "job", "submit", "--name", "x", "--gpu", "H100-80GB", "--work", "1h", "--deadline", "2h")
	if err == nil || !strings.Contains(err.Error(), "arbiter running with a fleet file (arbiter run --config bursar.yaml)") ||
		strings.Contains(err.Error(), "no responders") {
		t.Errorf("job submit with no arbiter taking jobs: err = %v\n%s", err, out)
	}
}
