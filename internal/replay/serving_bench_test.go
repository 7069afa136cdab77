package replay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/serving"
)

// BenchmarkServing replays every registered serving policy (the peers and bursar-direct in
// internal/serving, the service-backed bursar here) on the benchmark's default inputs (the two
// ServeGen traces, the Splitwise profile, the SkyNomad H100 capacity, GCP prices) over the 10
// windows of docs/serving.md, and reports each policy's headline figures, so that `make bench`
// prints the serving table. ns/op is the time to replay one policy over the 10 windows (plus
// od-autoscale, every policy's cost reference).
func BenchmarkServing(b *testing.B) {
	data := servingData(b)
	for _, demand := range serving.DefaultDemands(data) {
		in, err := serving.Load(serving.Paths{Data: data, Demand: demand})
		if err != nil {
			b.Fatal(err)
		}
		trace := strings.TrimSuffix(filepath.Base(demand), "_per_minute.csv")
		for _, name := range serving.PolicyNames() {
			b.Run(trace+"/"+name, func(b *testing.B) {
				var res []serving.Result
				for b.Loop() {
					if res, err = serving.Evaluate(context.Background(), in, serving.DefaultConfig(), []string{name}); err != nil {
						b.Fatal(err)
					}
				}
				r := res[0]
				b.ReportMetric(r.CostUSDPerMillionTokens, "usd_per_mtok")
				b.ReportMetric(r.CostPctOfODAutoscale, "cost_pct_od_autoscale")
				b.ReportMetric(r.CapacityAvailabilityPct, "availability_pct")
				b.ReportMetric(r.UnservedTokensPct, "unserved_pct")
				b.ReportMetric(r.SpotSharePct, "spot_pct")
				b.ReportMetric(r.MovesPerHour, "moves_per_h")
				if r.ForecastMAPEPct > 0 {
					b.ReportMetric(r.ForecastMAPEPct, "forecast_mape_pct")
				}
				if r.OptimalityGapPct > 0 {
					b.ReportMetric(r.OptimalityGapPct, "gap_to_bound_pct")
				}
			})
		}
	}
}

// servingData is the shared data folder, or a skip where it is absent.
func servingData(tb testing.TB) string {
	dir := filepath.Join("..", "..", serving.DefaultData)
	if _, err := os.Stat(filepath.Join(dir, "serving")); err != nil {
		tb.Skipf("the serving inputs live in %s (../shared/data/serving beside the repository): %v", dir, err)
	}
	return dir
}
