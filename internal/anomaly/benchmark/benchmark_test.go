package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/costseries"
)

// Seed fixes the injected anomalies.
const Seed = 32

// Options are the replays the benchmark's series come from.
func Options() costseries.Options {
	o := costseries.DefaultOptions()
	o.Data = filepath.Join("..", "..", "..", costseries.DefaultData)
	return o
}

func workloads(tb testing.TB) []*anomaly.Workload {
	tb.Helper()
	ss, err := costseries.Replay(context.Background(), Options())
	if errors.Is(err, costseries.ErrNoData) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	ws := Workloads(ss)
	fmt.Printf("cost series: %d leaf series (%.1f series-weeks) in %d workloads, each workload's total one scope series\n",
		len(ss), costseries.TotalWeeks(ss), len(ws))
	return ws
}

// BenchmarkAnomalies prints the table of every detector on the tuning and the reported halves,
// and reports Bursar's figures on the reported half as metrics. ns/op is the time to run every
// detector over both halves once.
func BenchmarkAnomalies(b *testing.B) {
	ws := workloads(b)
	tune, report := Split(ws)
	ds := Detectors(anomaly.DefaultConfig())
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name
	}
	var onTune, onReport []anomaly.Scores
	for b.Loop() {
		onTune, onReport = nil, nil
		for _, d := range ds {
			onTune = append(onTune, Evaluate(tune, Seed, d))
			onReport = append(onReport, Evaluate(report, Seed, d))
		}
	}
	b.StopTimer()
	WriteTable(os.Stdout, "tuning half (AWS1, m-large):", names, onTune)
	WriteTable(os.Stdout, "reported half (AWS2, m-mid):", names, onReport)
	r := onReport[0]
	b.ReportMetric(r.MedianDetectMin, "median_detect_min")
	b.ReportMetric(r.P95DetectMin, "p95_detect_min")
	b.ReportMetric(r.PrecisionPct, "precision_pct")
	b.ReportMetric(r.RecallPct, "recall_pct")
	b.ReportMetric(r.FalsePer100Weeks, "false_alerts_per_100_series_weeks")
}
