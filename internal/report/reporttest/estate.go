// Package reporttest fills a real store with an estate's history at the level the reports read
// it, for benchmarks and tests of the reports and of what serves them (the console). Only _test
// files and benchmarks import it.
package reporttest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
)

// Estate is a fleet's history: Series series (workload × location × GPU type × market, 40 to a
// workload) over Days days ending at End. It is written where the reports read it: the hourly
// rollups (cost_hourly, tokens_hourly), each series' latest replica.state (so replica_latest),
// the token counters of the last two hours, and the raw events the history reports read in
// full: price.observed, gpu.sample (for GPUs GPUs), plan.decided with action.updated (PlansPerDay
// a series), the reclaim notices of reclaim plans, and job.state of Jobs jobs.
type Estate struct {
	Series, Days int
	// PlansPerDay a series (default 2); GPUs sampled by gpu.sample every 10 minutes (default
	// 1000); Jobs (default 200).
	PlansPerDay, GPUs, Jobs int
	// End is where the history ends, on the hour; zero means the wall clock's hour, so the raw
	// telemetry's TTL keeps it while a benchmark runs.
	End time.Time
}

// The estate's places and GPU types. A series s is workload s/40 at locations[s%10], GPU type
// (s%40/10)%2 and market (s%40)/20.
var (
	locations = []fleet.Location{
		{Name: "aws-use1", Provider: "aws", Region: "us-east-1"}, {Name: "aws-usw2", Provider: "aws", Region: "us-west-2"},
		{Name: "aws-euw1", Provider: "aws", Region: "eu-west-1"}, {Name: "gcp-usc1", Provider: "gcp", Region: "us-central1"},
		{Name: "gcp-euw4", Provider: "gcp", Region: "europe-west4"}, {Name: "azure-eus", Provider: "azure", Region: "eastus"},
		{Name: "azure-weu", Provider: "azure", Region: "westeurope"}, {Name: "coreweave-ord", Provider: "coreweave", Region: "ORD1"},
		{Name: "lambda-tx", Provider: "lambda", Region: "us-south-1"}, {Name: "nebius-fi", Provider: "nebius", Region: "eu-north1"},
	}
	gpus      = []string{"H100-80GB", "A100-80GB"}
	types     = []string{"h100x8", "a100x8"}
	onDemand  = []float64{98.32, 40.96} // per 8-GPU replica-hour
	perRepl   = []float64{3000, 1200}   // tokens/s one replica serves
	seriesPer = 2 * 2 * 10              // series a workload has
)

// Workloads is how many workloads the estate's series make.
func (e Estate) Workloads() int { return (e.Series + seriesPer - 1) / seriesPer }

func (e Estate) withDefaults() Estate {
	if e.PlansPerDay == 0 {
		e.PlansPerDay = 2
	}
	if e.GPUs == 0 {
		e.GPUs = 1000
	}
	if e.Jobs == 0 {
		e.Jobs = 200
	}
	if e.End.IsZero() {
		e.End = time.Now().UTC().Truncate(time.Hour)
	}
	return e
}

// Fill writes the estate's history into st and returns its fleet file and the history's end.
// Each table is one INSERT ... SELECT FROM numbers(), so 30 days of 10,000 series take seconds.
func (e Estate) Fill(ctx context.Context, tb testing.TB, st *store.Store) (*fleet.Config, time.Time) {
	tb.Helper()
	e = e.withDefaults()
	if e.Series < 1 || e.Days < 1 {
		tb.Fatalf("estate of %d series over %d days: want at least one of each", e.Series, e.Days)
	}
	for _, ins := range append(e.inserts(st), e.historyInserts(st)...) {
		t0 := time.Now()
		if err := st.Exec(ctx, ins.sql+" SETTINGS max_insert_threads = 2"); err != nil {
			tb.Fatalf("filling %s: %v", ins.table, err)
		}
		tb.Logf("filled %s in %s", ins.table, time.Since(t0).Round(time.Millisecond))
	}
	return e.fleet(), e.End
}

// fleet is the estate's fleet file: every location, and each workload's team and serving rates.
func (e Estate) fleet() *fleet.Config {
	cfg := &fleet.Config{Locations: append([]fleet.Location(nil), locations...)}
	for w := range e.Workloads() {
		rates := map[string]float64{}
		for i, g := range gpus {
			rates[g] = perRepl[i]
		}
		cfg.Workloads = append(cfg.Workloads, fleet.Workload{Name: workloadName(w), Team: fmt.Sprintf("team%02d", w%20),
			Scaling: fleet.Scaling{Metric: fleet.MetricTokens}, Serving: fleet.Serving{PerReplica: rates}})
	}
	return cfg
}

func workloadName(w int) string { return fmt.Sprintf("svc%04d", w) }

// seriesCols are SQL expressions of a series number s: its labels, offer, ready replicas and
// on-demand price.
func seriesCols() string {
	str := func(xs []string) string { return "['" + strings.Join(xs, "', '") + "']" }
	var names, provs, regions []string
	for _, l := range locations {
		names, provs, regions = append(names, l.Name), append(provs, l.Provider), append(regions, l.Region)
	}
	return fmt.Sprintf(`concat('svc', leftPad(toString(intDiv(s, %[1]d)), 4, '0')) AS workload,
		%[2]s[s %% 10 + 1] AS location, %[3]s[s %% 10 + 1] AS provider, %[4]s[s %% 10 + 1] AS region,
		intDiv(s %% %[1]d, 10) %% 2 + 1 AS gi, %[5]s[gi] AS gpu, %[6]s[gi] AS itype, [%[7]v, %[8]v][gi] AS od,
		['spot', 'on_demand'][intDiv(s %% %[1]d, 20) + 1] AS market,
		concat(location, '/-/', itype, '/', market) AS offer, toInt64(1 + s %% 3) AS ready`,
		seriesPer, str(names), str(provs), str(regions), str(gpus), str(types), onDemand[0], onDemand[1])
}

// price is a series' price per replica-hour in hour h (an SQL expression): spot moves hourly,
// alike for every workload's series of one offer, so price.observed says what the series pay.
func price(h string) string {
	return fmt.Sprintf("if(market = 'spot', od * (0.35 + 0.05 * ((%s + s %% %d) %% 5)), od)", h, seriesPer)
}
