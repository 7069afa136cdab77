package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bursar-dev/bursar/internal/store"
)

// e2eEnv, when set, makes TestImportThenReconcileCLI run its steps in this process: chDB is one
// engine per process with its data path fixed by the first open, so the test runs itself in a
// process of its own, with a store of its own.
const e2eEnv = "BURSAR_REPORT_E2E_DIR"

const e2eFleet = `locations:
  - {name: aws-use1, provider: aws, region: us-east-1, zones: [us-east-1a, us-east-1b], account_ids: ["444455556666"], actuator: {kind: sim}}
  - {name: azure-eus, provider: azure, region: eastus, actuator: {kind: sim}}
  - {name: gcp-euw4, provider: gcp, region: europe-west4, actuator: {kind: sim}}
workloads:
  - {name: chat, gpu: {models: [H100-80GB], count: 8}, replicas: {min: 1, max: 4}}
  - {name: embed, gpu: {models: [A100-40GB], count: 8}, replicas: {min: 1, max: 4}}
  - {name: eu-chat, gpu: {models: [H100-80GB], count: 8}, replicas: {min: 1, max: 4}}
`

// TestImportThenReconcileCLI runs report import-billing on the hand-written fixtures and then
// report reconcile and report tokens --basis billed, as a user would, over a store holding what
// Bursar saw on Nov 30 (internal/report's billedHistory, less lambda-tx, with the instances the
// replicas at aws-use1 and gcp-euw4 ran on): the differences are the hand-computed ones of
// internal/billing's TestReconcileFixtures ("by resource id"), and the output says which rule
// matched each line and how many charges each rule matched.
func TestImportThenReconcileCLI(t *testing.T) {
	dir := os.Getenv(e2eEnv)
	if dir == "" {
		dir = t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestImportThenReconcileCLI$", "-test.count=1")
		cmd.Env = append(os.Environ(), e2eEnv+"="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	seedE2E(t, dir)
	fleetFile := filepath.Join(dir, "bursar.yaml")
	if err := os.WriteFile(fleetFile, []byte(e2eFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--data-dir", filepath.Join(dir, "data"), "--nats", noNATS}
	if out, err := execute(t, append([]string{"import-billing", "--focus", "../../internal/billing/testdata"}, common...)...); err != nil {
		t.Fatalf("import-billing: %v\n%s", err, out)
	}
	out, _, err := executeSplit(t, append([]string{"reconcile", "--since", "2026-11-30", "--until", "2026-12-01", "--fleet", fleetFile, "-o", "csv"}, common...)...)
	if err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	got := csvLines(t, out, "location", "workload", "estimated_usd", "effective_cost", "difference", "causes")
	for _, want := range []string{
		"aws-use1 chat 983.2 550 -433.2 commitment discount -433.20; matched by resource id",
		"aws-use1 embed 96 96.8 0.8 price or usage +0.80; matched by resource id", // tagged chat, on embed's instance
		"azure-eus chat 392 352.8 -39.2 price or usage -39.20; matched by tag",
		"gcp-euw4 eu-chat 180 189 9 price or usage +9.00; matched by resource id",
		"aws-use1 (unmatched) 0 318.96 318.96 billed usage Bursar has no replica for (2 charges)", // the g5 and i-0p5eeee
		"aws-use1 (credits) 0 -50 -50 credits"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("reconcile lacks %q:\n%s", want, got)
		}
	}
	out, err = execute(t, append([]string{"reconcile", "--since", "2026-11-30", "--until", "2026-12-01", "--fleet", fleetFile}, common...)...)
	if want := "note: usage charges matched: 3 by resource id, 1 by tag, 0 by location and SKU, 0 by location, 3 unmatched"; err != nil || !strings.Contains(out, want) {
		t.Errorf("reconcile (%v) does not say %q:\n%s", err, want, out)
	}
	// A report over a window the history holds nothing for says so, and why, instead of bare zeros.
	_, stderr0, err := executeSplit(t, append([]string{"cost", "--since", "2025-01-01", "--until", "2025-01-02", "--fleet", fleetFile}, common...)...)
	if err != nil || !strings.Contains(stderr0, "no rows: the history holds nothing this report reads for Cost, 2025-01-01") {
		t.Errorf("cost over an empty window (%v): stderr %q, want a hint", err, stderr0)
	}
	// A CSV export keeps its notes: on standard error, apart from the data.
	stdout, stderr, err := executeSplit(t, append([]string{"focus", "--month", "2026-11", "--fleet", fleetFile}, common...)...)
	if want := "note: location azure-eus has no account_ids in the fleet file"; err != nil || !strings.Contains(stderr, want) ||
		strings.Contains(stdout, "note:") {
		t.Errorf("focus -o csv (%v): want %q on stderr only\nstdout:\n%s\nstderr:\n%s", err, want, stdout, stderr)
	}
	out, _, err = executeSplit(t, append([]string{"tokens", "--since", "2026-11-30", "--until", "2026-12-01", "--by", "workload,location",
		"--basis", "billed", "--fleet", fleetFile, "-o", "csv"}, common...)...)
	if err != nil {
		t.Fatalf("tokens: %v\n%s", err, out)
	}
	if got := csvLines(t, out, "workload", "location", "usd", "usd_per_m_tokens", "basis"); !strings.Contains(got, "chat aws-use1 550 5.5 billed\n") {
		t.Errorf("tokens --basis billed:\n%s", got)
	}
}

// csvLines prints the named columns of a CSV output, a line per row.
func csvLines(t *testing.T, out string, cols ...string) string {
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("output is not CSV (%v):\n%s", err, out)
	}
	var b strings.Builder
	for _, r := range recs[1:] {
		var vals []string
		for _, c := range cols {
			for i, h := range recs[0] {
				if h == c {
					vals = append(vals, r[i])
				}
			}
		}
		b.WriteString(strings.Join(vals, " ") + "\n")
	}
	return b.String()
}

// seedE2E makes the store under dir/data with the replicas and tokens of Nov 30.
func seedE2E(t *testing.T, dir string) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: filepath.Join(dir, "data"), Owner: "report test"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows strings.Builder
	for i, r := range []struct {
		workload, location, provider, market, offer, gpu string
		usd                                              float64
		hours                                            int
		instances                                        string // as the actuator named them; azure-eus's history names none
	}{
		{"chat", "aws-use1", "aws", "on_demand", "aws-use1/us-east-1a/p5.48xlarge/on_demand", "H100-80GB", 98.32, 10, "['i-0p5aaaa']"},
		{"embed", "aws-use1", "aws", "spot", "aws-use1/us-east-1b/p4d.24xlarge/spot", "A100-40GB", 12, 8, "['aws:///us-east-1b/i-0p4dbbbb']"},
		{"chat", "azure-eus", "azure", "on_demand", "azure-eus/-/Standard_ND96isr_H100_v5/on_demand", "H100-80GB", 98, 4, "[]"},
		{"eu-chat", "gcp-euw4", "gcp", "spot", "gcp-euw4/europe-west4-a/a3-highgpu-8g/spot", "H100-80GB", 30, 6, "['gce://bursar-eu/europe-west4-a/eu-chat-0']"},
	} {
		start, end := "2026-11-30 00:00:00.000", fmt.Sprintf("2026-11-30 %02d:00:00.000", r.hours)
		// at, ready, prev_at, prev_ready, prev_usd, instances, prev_instances
		for j, s := range [][7]any{{start, 1, start, 0, 0.0, r.instances, "[]"}, {end, 0, start, 1, r.usd, "[]", r.instances}} {
			fmt.Fprintf(&rows, "e2e%d-%d\t%s\t1\t%s\t%s\t%s\t%s\t%s\t%s\t8\t%g\t1\t%d\t%s\t%d\t%g\t%s\t%s\n", i, j, s[0],
				r.workload, r.location, r.provider, r.market, r.offer, r.gpu, r.usd, s[1], s[2], s[3], s[4], s[5], s[6])
		}
	}
	if err := st.Insert(ctx, "replica_state", "id, at, version, workload, location, provider, market, offer, gpu_model, "+
		"gpus_per_replica, usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour, instances, prev_instances",
		"e2e-replicas", []byte(rows.String())); err != nil {
		t.Fatal(err)
	}
	// chat at aws-use1 served 100M tokens by 10:00.
	tokens := "t0\t2026-11-30 00:00:00.000\t1\taws-use1\tchat\tr1\tvllm\t0\t0\t0\t0\t0\t0\t0\n" +
		"t1\t2026-11-30 10:00:00.000\t1\taws-use1\tchat\tr1\tvllm\t80000000\t20000000\t50000\t0\t80000000\t20000000\t50000\n"
	if err := st.Insert(ctx, "tokens_sample", "id, at, version, location, workload, replica, server, prompt_tokens, "+
		"generation_tokens, requests, reset, delta_prompt_tokens, delta_generation_tokens, delta_requests", "e2e-tokens", []byte(tokens)); err != nil {
		t.Fatal(err)
	}
}

// ownedEnv, when set, makes TestImportBillingWhileTheStoreIsOwned run in this process, which
// has opened no embedded store (chDB keeps the first data path a process opens).
const ownedEnv = "BURSAR_REPORT_OWNED_DIR"

// TestImportBillingWhileTheStoreIsOwned: with arbiter run owning the embedded store,
// import-billing named the owner but advised asking it over NATS or a --data-dir of its own,
// neither of which imports anything the arbiter reads. It says to stop the owner, or to use a
// ClickHouse server, and imports nothing.
func TestImportBillingWhileTheStoreIsOwned(t *testing.T) {
	dir := os.Getenv(ownedEnv)
	if dir == "" {
		dir = t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestImportBillingWhileTheStoreIsOwned$", "-test.count=1")
		cmd.Env = append(os.Environ(), ownedEnv+"="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o750); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(data, "clickhouse.lock"), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.WriteString(`{"program":"arbiter run","pid":4242,"host":"gpu-1","since":"2026-12-01T08:00:00Z"}`); err != nil {
		t.Fatal(err)
	}
	out, err := execute(t, "import-billing", "--focus", "../../internal/billing/testdata", "--data-dir", data, "--nats", noNATS)
	for _, want := range []string{`owned by "arbiter run" (pid 4242 on gpu-1`, "stop it, import the bill, then start it again", "--clickhouse"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("import-billing = %v, want an error saying %q\n%s", err, want, out)
		}
	}
	if err != nil && strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("import-billing advises a data directory of its own, which the owner never reads: %v", err)
	}
}
