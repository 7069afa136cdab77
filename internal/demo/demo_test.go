package demo

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	storetest.RemoveEmbeddedDir()
	os.Exit(code)
}

// TestRunShortTrace replays three hours of the shipped trace through the whole system (embedded
// NATS and chDB, collector, arbiter, recorder, reports) and checks that the report has figures
// for every workload and location the fleet ran in, and that its files exist.
func TestRunShortTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end demo run; skipped with -short")
	}
	dir := filepath.Join("..", "..", "examples", "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Dir: dir, DataDir: t.TempDir(), HistoryDir: storetest.EmbeddedDir(t), Length: 3 * time.Hour, Database: "demo_short"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fleet.Load(filepath.Join(dir, "bursar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checkWorkloads(t, cfg, res)
	if len(res.Summary.Rows) < len(cfg.Workloads)*cfg.Workloads[0].MinLocations {
		t.Errorf("%d workload/location rows, want at least %d (every workload spans min_locations)",
			len(res.Summary.Rows), len(cfg.Workloads)*cfg.Workloads[0].MinLocations)
	}
	for _, r := range res.Summary.Rows {
		for _, c := range []string{"usd", "gpu_hours", "on_demand_usd", "saving_pct", "m_tokens", "usd_per_m_tokens", "ready_pct", "reclaims"} {
			if r[c] == nil {
				t.Errorf("%s at %s: no %s", r["workload"], r["location"], c)
			}
		}
		if num(r["gpu_hours"]) <= 0 || num(r["usd"]) <= 0 {
			t.Errorf("%s at %s: no spend recorded: %v", r["workload"], r["location"], r)
		}
	}
	checkByGPU(t, cfg, res)
	checkFiles(t, res, cfg)
}

// checkByGPU checks the cost per million tokens by workload and GPU type: a row per type a
// workload ran on, each a model the workload states a rate for, with tokens and a cost.
func checkByGPU(t *testing.T, cfg *fleet.Config, res *Result) {
	t.Helper()
	n := 0
	for _, r := range res.ByGPU.Rows {
		name, gpu := str(r["workload"]), str(r["gpu"])
		if name == "" {
			continue // the total
		}
		n++
		w, ok := cfg.Workload(name)
		if !ok {
			t.Errorf("row for workload %q, not in the fleet", name)
			continue
		}
		if _, ok := w.RateFor(gpu); !ok {
			t.Errorf("%s on %s: a GPU type the workload states no rate for", name, gpu)
		}
		if num(r["tokens"]) <= 0 || num(r["usd_per_m_tokens"]) <= 0 {
			t.Errorf("%s on %s: no tokens or cost per million tokens: %v", name, gpu, r)
		}
	}
	if n < len(cfg.Workloads) {
		t.Errorf("%d workload and GPU rows, want at least one per workload:\n%v", n, res.ByGPU.Rows)
	}
}

// TestRunIsDeterministic replays the same slice of the trace twice on the virtual clock and
// checks that both runs report the same figures: the demo steps the arbiter tick by tick and
// waits for what it published to be folded, so nothing depends on wall time or the bus's speed.
func TestRunIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end demo runs; skipped with -short")
	}
	dir := filepath.Join("..", "..", "examples", "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	end := time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC)
	var got [2]*Result
	for i := range got {
		res, err := Run(ctx, Options{Dir: dir, DataDir: t.TempDir(), HistoryDir: storetest.EmbeddedDir(t), Length: 3 * time.Hour, End: end,
			Database: "demo_same_" + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = res
	}
	for _, tab := range []struct {
		name string
		a, b *report.Result
	}{{"per workload", got[0].Workloads, got[1].Workloads}, {"per workload and location", got[0].Summary, got[1].Summary},
		{"by workload and GPU type", got[0].ByGPU, got[1].ByGPU}} {
		if len(tab.a.Rows) == 0 {
			t.Errorf("%s: no rows", tab.name)
		}
		if !reflect.DeepEqual(tab.a.Rows, tab.b.Rows) {
			t.Errorf("%s: two runs differ:\n%v\n%v", tab.name, tab.a.Rows, tab.b.Rows)
		}
	}
}

func checkWorkloads(t *testing.T, cfg *fleet.Config, res *Result) {
	t.Helper()
	if len(res.Workloads.Rows) != len(cfg.Workloads) {
		t.Fatalf("%d workload rows, want %d", len(res.Workloads.Rows), len(cfg.Workloads))
	}
	reclaims := 0.0
	for _, r := range res.Workloads.Rows {
		for _, col := range []string{"available_pct_of_desired", "available_pct_of_min"} {
			if a := num(r[col]); a <= 0 || a > 100 {
				t.Errorf("%s: %s %v%%, want in (0,100]", r["workload"], col, a)
			}
		}
		if a := num(r["enough_capacity_pct"]); a <= 0 || a > 100 {
			t.Errorf("%s: enough_capacity_pct %v%%, want in (0,100]", r["workload"], a)
		}
		if num(r["m_tokens"]) <= 0 || num(r["usd_per_m_tokens"]) <= 0 {
			t.Errorf("%s: no tokens or cost per million tokens: %v", r["workload"], r)
		}
		// A spot-first fleet pays less than on-demand for its GPU-hours. The saving is net of the
		// egress the arbiter's own moves pulled, which over the first hours of a trace (while the
		// hazard estimates learn the markets) can exceed what spot saved, so only its arithmetic is
		// checked here.
		od, usd, eg := num(r["on_demand_usd"]), num(r["usd"]), num(r["egress_usd"])
		if usd <= 0 || usd >= od {
			t.Errorf("%s: paid $%v against $%v on-demand, want less on a spot-first fleet", r["workload"], usd, od)
		}
		if eg < 0 {
			t.Errorf("%s: egress $%v, want none or more", r["workload"], eg)
		}
		if s, want := num(r["saving_pct"]), 100*(od-usd-eg)/od; math.Abs(s-want) > 0.2 {
			t.Errorf("%s: saving_pct %v, want %.1f (on-demand less paid less egress, of on-demand)", r["workload"], s, want)
		}
		reclaims += num(r["reclaims"])
	}
	if reclaims == 0 {
		t.Error("no reclaims in three hours of a trace whose zones shrink")
	}
}

func checkFiles(t *testing.T, res *Result, cfg *fleet.Config) {
	t.Helper()
	md, err := os.ReadFile(res.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range cfg.Workloads {
		if !strings.Contains(string(md), "| "+w.Name+" |") {
			t.Errorf("report.md has no row for %s", w.Name)
		}
	}
	if len(res.Charts) < 4 {
		t.Errorf("%d charts, want availability, cost, tokens and savings", len(res.Charts))
	}
	for _, c := range res.Charts {
		if fi, err := os.Stat(c); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", c, err)
		}
		if !strings.Contains(string(md), "("+filepath.Base(c)+")") {
			t.Errorf("report.md does not embed %s", filepath.Base(c))
		}
	}
}

func TestReplacements(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := func(w, loc string) actuate.Group {
		return actuate.Group{Workload: w, Location: loc, Market: events.Spot}
	}
	lives := []sim.Life{
		{Instance: "a-0", Group: g("chat", "a"), Launched: t0, Ready: t0.Add(time.Minute), Gone: t0.Add(12 * time.Minute), Reclaim: true},
		{Instance: "a-1", Group: g("chat", "a"), Launched: t0, Ready: t0.Add(time.Minute), Gone: t0.Add(12 * time.Minute), Reclaim: true},
		{Instance: "b-2", Group: g("chat", "b"), Launched: t0.Add(10 * time.Minute), Ready: t0.Add(14 * time.Minute)},
		{Instance: "b-3", Group: g("sum", "b"), Launched: t0.Add(10 * time.Minute), Ready: t0.Add(11 * time.Minute)},
		{Instance: "a-4", Group: g("chat", "a"), Launched: t0.Add(5 * time.Minute), Ready: t0.Add(6 * time.Minute)},
	}
	noticed := map[string]time.Time{"a-0": t0.Add(10 * time.Minute), "a-1": t0.Add(10 * time.Minute)}
	got := replacements(lives, noticed)
	// a-4 launched before the notices and b-3 is another workload's: only b-2 replaces one.
	want := reclaimStat{reclaims: 2, replaced: 1, toReady: 4 * time.Minute}
	if len(got) != 1 || got[wl{"chat", "a"}] == nil || *got[wl{"chat", "a"}] != want {
		t.Fatalf("replacements = %v, want chat@a %+v", got, want)
	}
}
