package replay

import (
	"context"
	"testing"
)

// benchPolicies are the rows of REPLAY.md's table, plus on-demand (the 100 % reference) and every
// other registered policy (bursar, once it is registered).
func benchPolicies() []string {
	list := []string{"on-demand", "even-spread:0", "even-spread:1", "round-robin:0", "round-robin:1", "spothedge", "optimal"}
	seen := map[string]bool{"on-demand": true, "even-spread": true, "round-robin": true, "spothedge": true, "optimal": true}
	for _, name := range PolicyNames() {
		if !seen[name] {
			list = append(list, name)
		}
	}
	return list
}

// BenchmarkReplay replays every policy on AWS1 and AWS2 over the peer's 10 windows and reports
// the figures of REPLAY.md's table (availability_pct, cost_pct of on-demand) per policy, so that
// bursar is printed beside SpotHedge and the hindsight Optimal measured in the same run; ns/op is
// the time to replay one policy over the 10 windows.
func BenchmarkReplay(b *testing.B) {
	cfg := peerConfig(b)
	for _, name := range []string{"AWS1", "AWS2"} {
		tr := loadSkyServe(b, name)
		for _, policy := range benchPolicies() {
			specs, err := ParsePolicies(policy)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name+"/"+policy, func(b *testing.B) {
				var res []Result
				for b.Loop() {
					res, err = Evaluate(context.Background(), tr, cfg, specs)
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(res[0].AvailabilityPct, "availability_pct")
				b.ReportMetric(res[0].CostPct, "cost_pct")
			})
		}
	}
}
