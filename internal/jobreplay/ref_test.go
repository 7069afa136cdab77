package jobreplay

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// refFolder is where the shared traces are, relative to this package.
func refFolder(t testing.TB, name string) []Market {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "data", "traces", "cant-be-late", name)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the reference traces are not here (%v): JOBS.md's numbers need ../shared/data", err)
	}
	ms, err := LoadMarkets(os.DirFS(dir), ".")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

const (
	awsAvail   = "availability-1node-aws-10-26-2022"
	awsPreempt = "preemption-1node-aws-04-22-2023"
)

// TestAnchor is JOBS.md's unit-test anchor: us-west-2b_v100_1.json from tick 684 (554 ticks),
// D = 52 h, d = 0.05 h.
func TestAnchor(t *testing.T) {
	var m *Market
	ms := refFolder(t, awsAvail)
	for i := range ms {
		if ms[i].Name == "us-west-2b_v100_1" {
			m = &ms[i]
		}
	}
	if m == nil {
		t.Fatal("us-west-2b_v100_1 not in the folder")
	}
	job := RefJob(52*3600, 180)
	for _, tt := range []struct {
		policy string
		want   float64
	}{{"od", 147.39}, {"greedy", 143.2162}, {"uniform-progress", 110.6367}} {
		o, err := Run(tt.policy, job, Window{m, 684})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(o.Cost-tt.want) > 0.00005 || !o.Met {
			t.Errorf("%s: cost %.4f met %v, want %.4f met", tt.policy, o.Cost, o.Met, tt.want)
		}
	}
}

// refRow is one row of JOBS.md's reference tables: mean $ per job, % of on-demand, deadlines met.
type refRow struct {
	deadline, overhead int64
	want               map[string]float64
}

// refTables are JOBS.md's two tables (every deadline met by every policy listed).
var refTables = []struct {
	folder  string
	windows int
	rows    []refRow
}{
	{awsAvail, 30, []refRow{
		{52 * 3600, 180, map[string]float64{"od": 147.39, "greedy": 123.75, "uniform-progress": 104.77, "optimal": 95.04}},
		{52 * 3600, 720, map[string]float64{"od": 147.90, "greedy": 127.86, "uniform-progress": 118.95, "optimal": 103.57}},
		{70 * 3600, 180, map[string]float64{"od": 147.39, "greedy": 95.52, "uniform-progress": 86.95, "optimal": 82.45}},
		{70 * 3600, 720, map[string]float64{"od": 147.90, "greedy": 102.45, "uniform-progress": 97.60, "optimal": 89.21}},
	}},
	{awsPreempt, 10, []refRow{
		{52 * 3600, 180, map[string]float64{"od": 147.04, "greedy": 125.84, "uniform-progress": 103.53, "optimal": 94.18}},
		{52 * 3600, 720, map[string]float64{"od": 147.51, "greedy": 130.22, "uniform-progress": 119.92, "optimal": 102.08}},
		{70 * 3600, 180, map[string]float64{"od": 147.04, "greedy": 97.70, "uniform-progress": 83.88, "optimal": 79.50}},
		{70 * 3600, 720, map[string]float64{"od": 147.51, "greedy": 104.08, "uniform-progress": 94.13, "optimal": 86.49}},
	}},
}

// TestReferenceTables reproduces JOBS.md's tables to the cent with on-demand, Greedy and UP on
// both folders, every setting; each policy meets every deadline.
func TestReferenceTables(t *testing.T) {
	policies := []string{"od", "greedy", "uniform-progress"}
	for _, tab := range refTables {
		ms := refFolder(t, tab.folder)
		for _, row := range tab.rows {
			checkRow(t, tab.folder, Windows(ms, tab.windows), row, policies)
		}
	}
}

// checkRow compares one row's policies with the reference, to the cent.
func checkRow(t *testing.T, folder string, windows []Window, row refRow, policies []string) {
	t.Helper()
	res, err := Evaluate(context.Background(), RefJob(row.deadline, row.overhead), windows, policies)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		want := row.want[r.Policy]
		if got := math.Round(r.MeanCost*100) / 100; got != want || r.DeadlinesMetPct != 100 {
			t.Errorf("%s D=%dh d=%ds %s: mean $%.4f (%.2f), %.1f%% met; want $%.2f, 100%%",
				folder, row.deadline/3600, row.overhead, r.Policy, r.MeanCost, got, r.DeadlinesMetPct, want)
		}
	}
}

// TestOptimalTables reproduces JOBS.md's Optimal column to the cent. The 600 s folder runs in
// every test run; the 32 s folder (10,388 ticks a window, up to a minute and a GB a window for
// d = 0.2 h on this machine) runs only with BURSAR_JOBS_DP32=1 and without -short.
func TestOptimalTables(t *testing.T) {
	for _, tab := range refTables {
		if tab.folder == awsPreempt && (testing.Short() || os.Getenv("BURSAR_JOBS_DP32") == "") {
			t.Logf("skipping Optimal on %s: set BURSAR_JOBS_DP32=1 (and no -short) to run it, minutes", tab.folder)
			continue
		}
		ms := refFolder(t, tab.folder)
		for _, row := range tab.rows {
			checkRow(t, tab.folder, Windows(ms, tab.windows), row, []string{"optimal"})
		}
	}
}
