package jobreplay

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
)

// benchPolicies are the reference policies, and bursar-direct where it is registered; optimal
// on 32 s ticks only with BURSAR_JOBS_DP32=1 (up to a minute a window).
func benchPolicies(folder string) []string {
	list := []string{"od", "greedy", "uniform-progress"}
	if folder != awsPreempt || os.Getenv("BURSAR_JOBS_DP32") != "" {
		list = append(list, "optimal")
	}
	if slices.Contains(PolicyNames(), "bursar-direct") {
		list = append(list, "bursar-direct")
	}
	return list
}

// BenchmarkJobsReplay replays JOBS.md's folders and four settings. Per setting it reports each
// policy's mean cost (<policy>_usd) and how far the reference policies are from JOBS.md's table
// (max_dev_cents, the goal being 0), then the same job allowed in every zone of the folder:
// each policy's mean there (<policy>_zones_usd) beside its best single zone over the same windows
// (<policy>_best_zone_usd). ns/op is one setting's replay of every policy.
func BenchmarkJobsReplay(b *testing.B) {
	for _, tab := range refTables {
		ms := refFolder(b, tab.folder)
		names := benchPolicies(tab.folder)
		for _, row := range tab.rows {
			job := RefJob(row.deadline, row.overhead)
			b.Run(fmt.Sprintf("%s/D%dh_d%ds", tab.folder, row.deadline/3600, row.overhead), func(b *testing.B) {
				var single, zones []Result
				var err error
				for b.Loop() {
					if single, err = Evaluate(context.Background(), job, Windows(ms, tab.windows), names); err != nil {
						b.Fatal(err)
					}
					if zones, err = EvaluateZones(context.Background(), job, tab.folder, ms, tab.windows, names); err != nil {
						b.Fatal(err)
					}
				}
				report(b, row, single, zones)
			})
		}
	}
}

// report prints one setting's figures as metrics.
func report(b *testing.B, row refRow, single, zones []Result) {
	dev := 0.0
	for _, r := range single {
		b.ReportMetric(r.MeanCost, r.Policy+"_usd")
		if want, ok := row.want[r.Policy]; ok {
			dev = max(dev, math.Abs(math.Round(r.MeanCost*100)-want*100))
		}
		if r.DeadlinesMetPct < 100 {
			b.ReportMetric(r.DeadlinesMetPct, r.Policy+"_met_pct")
		}
	}
	b.ReportMetric(dev, "max_dev_cents")
	for _, r := range zones {
		b.ReportMetric(r.MeanCost, r.Policy+"_zones_usd")
		b.ReportMetric(r.BestZoneCost, r.Policy+"_best_zone_usd")
	}
}
