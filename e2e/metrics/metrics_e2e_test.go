//go:build e2e

// Package metrics_test runs the programs as a user would and scrapes them with a real
// Prometheus (Debian's prometheus package): `arbiter run` with the demo fleet on embedded
// defaults, a collector publishing the demo's prices, and `report serve`.
package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/health/healthtest"
	"github.com/bursar-dev/bursar/internal/promtest"
)

const (
	// scrapeEvery is the Prometheus scrape interval of the test.
	scrapeEvery = time.Second
	// historyCatchUp is how long after a window the history is sure to hold all of it: a
	// replica.state after the window (the arbiter reports every 15 s) and its commit.
	historyCatchUp = 20 * time.Second
)

// TestE2EPrometheusScrapesTheLiveSystem: the three /metrics endpoints are scraped up, each
// passes `promtool check metrics`, and what Prometheus says the fleet spent between two scrapes
// (the bursar_spend_usd_total counters, summed) is what `report cost` says for the same window.
func TestE2EPrometheusScrapesTheLiveSystem(t *testing.T) {
	promtest.Binary(t, "prometheus") // skip (or fail) before building anything
	promtest.Binary(t, "promtool")
	bin := buildPrograms(t)
	dir := t.TempDir()
	fleetFile, collectorFile := demoFleet(t, dir), collectorConfig(t, dir)
	data, natsAddr := filepath.Join(dir, "data"), healthtest.FreeAddr(t)
	arbiterAddr, collectorAddr, reportAddr := healthtest.FreeAddr(t), healthtest.FreeAddr(t), healthtest.FreeAddr(t)
	bus := []string{"--data-dir", data, "--nats", "nats://" + natsAddr, "--log-level", "info"}

	promtest.Run(t, filepath.Join(bin, "arbiter"), nil, "--data-dir", data, "--log-level", "info", "run", "--config", fleetFile,
		"--listen", natsAddr, "--metrics-listen", arbiterAddr, "--console-listen", "")
	awaitReady(t, "arbiter run", arbiterAddr)
	promtest.Run(t, filepath.Join(bin, "collector"), nil, append(bus, "run", "--config", collectorFile,
		"--metrics-listen", collectorAddr)...)
	promtest.Run(t, filepath.Join(bin, "report"), []string{"BURSAR_SLACK_API_URL=" + fakeSlack(t),
		"BURSAR_SLACK_BOT_TOKEN=xoxb-test", "BURSAR_SLACK_CHANNEL=C0REPORTS"},
		append(bus, "serve", "--report", "cost", "--schedule", "0 0 1 1 *", "--fleet", fleetFile,
			"--metrics-listen", reportAddr)...)
	awaitReady(t, "collector run", collectorAddr)
	awaitReady(t, "report serve", reportAddr)

	prom := promtest.Start(t, promtest.Config{Interval: scrapeEvery,
		RuleFiles: []string{filepath.Join(root, "deploy", "helm", "bursar", "rules", "bursar-alerts.yaml")},
		Jobs: []promtest.Job{{Name: "arbiter", Targets: []string{arbiterAddr}},
			{Name: "collector", Targets: []string{collectorAddr}}, {Name: "report", Targets: []string{reportAddr}}}})
	ctx := context.Background()
	promtest.Eventually(t, time.Minute, "all three targets up", func() error { return allUp(ctx, prom) })

	for job, addr := range map[string]string{"arbiter": arbiterAddr, "collector": collectorAddr, "report": reportAddr} {
		if problems := promtest.CheckMetrics(t, scrape(t, addr)); len(problems) > 0 {
			t.Errorf("promtool check metrics on %s's /metrics:\n%s", job, strings.Join(problems, "\n"))
		}
	}

	// The arbiter places the demo's minimum replicas once it has prices; they are ready 2 s
	// after launch and cost from then on.
	var t1 time.Time
	promtest.Eventually(t, 3*time.Minute, "the fleet costs something", func() error {
		var err error
		t1, err = spendSampleTime(ctx, prom, time.Time{})
		return err
	})
	// Two minutes of spend make a few cents: report cost prints USD to the cent.
	var t2 time.Time
	checkRules(t, ctx, prom)
	promtest.Eventually(t, 5*time.Minute, "two minutes of spend scraped", func() error {
		var err error
		if t2, err = spendSampleTime(ctx, prom, time.Time{}); err != nil {
			return err
		}
		if t2.Sub(t1) < 2*time.Minute {
			return fmt.Errorf("scraped up to %s after the first", t2.Sub(t1))
		}
		return nil
	})
	spent := instant(t, ctx, prom, "sum(bursar_spend_usd_total)", t2) - instant(t, ctx, prom, "sum(bursar_spend_usd_total)", t1)
	perHour := instant(t, ctx, prom, fmt.Sprintf("max_over_time(sum(bursar_spend_usd_per_hour)[%ds:%s])",
		int(t2.Sub(t1).Seconds())+1, scrapeEvery), t2)
	// A replica's state reaches the arbiter's spend ledger when the arbiter observes it, at most
	// about a scrape after the state's time, while the history records it at its time: between
	// two scrapes the counter may hold spend that belongs just before or after the scrape, at
	// most one scrape interval's worth at the fleet's rate.
	tol := perHour * scrapeEvery.Hours()
	// report cost counts a replica as running up to the fleet's latest replica.state in the
	// history, which the arbiter publishes every 15 s (arbiter.Options.ReportEvery) and the
	// recorder commits within about a second: once the scrapes have gone 20 s past t2, the
	// history holds the whole window, and the report's figure is final.
	promtest.Eventually(t, 2*time.Minute, "the history past the window", func() error {
		now, err := spendSampleTime(ctx, prom, time.Time{})
		if err == nil && now.Sub(t2) < historyCatchUp {
			err = fmt.Errorf("scraped up to %s after the window", now.Sub(t2))
		}
		return err
	})
	if err := agrees(ctx, t.Logf, bin, bus, fleetFile, t1, t2, spent, tol); err != nil {
		t.Fatal(err)
	}
}

// agrees runs report cost over [t1, t2) and compares it with spent. The report's usd column is
// rounded to the cent, so it is held to half a cent more; gpu_hours × usd_per_gpu_hour (rounded to
// 1e-3 and 1e-4) gives the spend closer, and is held to its own rounding.
func agrees(ctx context.Context, logf func(string, ...any), bin string, bus []string, fleetFile string, t1, t2 time.Time, spent, tol float64) error {
	args := append(append([]string{}, bus...), "--log-level", "error", "cost", "--by", "market", "--fleet", fleetFile,
		"--since", t1.UTC().Format(time.RFC3339Nano), "--until", t2.UTC().Format(time.RFC3339Nano), "-o", "json")
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "report"), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr // its notes (the basis) go there
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("report cost: %v\n%s", err, stderr.String())
	}
	var rows []struct {
		USD           float64 `json:"usd"`
		GPUHours      float64 `json:"gpu_hours"`
		USDPerGPUHour float64 `json:"usd_per_gpu_hour"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		return fmt.Errorf("report cost -o json: %v\n%s", err, out)
	}
	var usd, derived, roundErr float64
	for _, r := range rows {
		usd += r.USD
		derived += r.GPUHours * r.USDPerGPUHour
		roundErr += 0.0005*r.USDPerGPUHour + 0.00005*r.GPUHours + 0.0005*0.00005
	}
	cents := 0.005 * float64(len(rows))
	if d := math.Abs(usd - spent); d > tol+cents {
		return fmt.Errorf("report cost %s to %s: usd %.4f, Prometheus %.6f (off by %.6f, tolerance %.6f)", t1, t2, usd, spent, d, tol+cents)
	}
	if d := math.Abs(derived - spent); d > tol+roundErr {
		return fmt.Errorf("report cost %s to %s: gpu_hours × usd_per_gpu_hour %.6f, Prometheus %.6f (off by %.6f, tolerance %.6f)",
			t1, t2, derived, spent, d, tol+roundErr)
	}
	logf("%s to %s: Prometheus %.6f USD, report cost %.2f USD (gpu_hours × usd_per_gpu_hour %.6f), tolerance %.6f + rounding",
		t1.Format(time.TimeOnly), t2.Format(time.TimeOnly), spent, usd, derived, tol)
	return nil
}

// checkRules: the chart's alerting rules evaluate on the live series without error, and the
// arbiter leading is no BursarNoLeader.
func checkRules(t *testing.T, ctx context.Context, prom *promtest.Server) {
	t.Helper()
	var rules []promtest.Rule
	promtest.Eventually(t, time.Minute, "every rule evaluated", func() error {
		var err error
		if rules, err = prom.Rules(ctx); err != nil {
			return err
		}
		for _, r := range rules {
			if r.Health != "ok" {
				return fmt.Errorf("%s: health %s %s", r.Name, r.Health, r.LastError)
			}
		}
		return nil
	})
	for _, r := range rules {
		if r.Name == "BursarNoLeader" && r.State != "inactive" {
			t.Errorf("BursarNoLeader is %s while the arbiter leads", r.State)
		}
		if r.State != "inactive" {
			t.Logf("alert %s is %s", r.Name, r.State)
		}
	}
}

// allUp says whether every target is up, or which is not and why.
func allUp(ctx context.Context, prom *promtest.Server) error {
	ts, err := prom.Targets(ctx)
	if err != nil {
		return err
	}
	if len(ts) != 3 {
		return fmt.Errorf("%d targets, want 3", len(ts))
	}
	for _, tg := range ts {
		if tg.Health != "up" {
			return fmt.Errorf("%s (%s) is %s: %s", tg.Job, tg.URL, tg.Health, tg.LastError)
		}
	}
	return nil
}

// spendSampleTime returns the time of the latest scrape that saw spend (at or before at; the
// zero time: now): the timestamp of its bursar_spend_usd_total samples.
func spendSampleTime(ctx context.Context, prom *promtest.Server, at time.Time) (time.Time, error) {
	s, err := prom.Query(ctx, "max(timestamp(bursar_spend_usd_total)) and on() sum(bursar_spend_usd_per_hour) > 0", at)
	if err != nil {
		return time.Time{}, err
	}
	if len(s) == 0 {
		return time.Time{}, fmt.Errorf("no spend scraped yet")
	}
	return time.UnixMilli(int64(math.Round(s[0].Value * 1000))).UTC(), nil
}

// instant evaluates a query that gives one value at at.
func instant(t *testing.T, ctx context.Context, prom *promtest.Server, expr string, at time.Time) float64 {
	t.Helper()
	s, err := prom.Query(ctx, expr, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 {
		t.Fatalf("%s at %s: %d samples, want 1", expr, at, len(s))
	}
	return s[0].Value
}
