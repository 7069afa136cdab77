package jobs

import (
	"context"
	"fmt"
	"testing"
)

// TestBursarDirect: on both reference folders and all four settings, the deadline planner meets
// every deadline and costs no more than Uniform Progress over the same windows.
func TestBursarDirect(t *testing.T) {
	for _, tab := range refTables {
		ms := refFolder(t, tab.folder)
		for _, row := range tab.rows {
			res, err := Evaluate(context.Background(), RefJob(row.deadline, row.overhead), Windows(ms, tab.windows),
				[]string{"uniform-progress", "bursar-direct"})
			if err != nil {
				t.Fatal(err)
			}
			up, bu := res[0], res[1]
			t.Logf("%s D=%dh d=%ds: bursar-direct $%.2f, UP $%.2f", tab.folder, row.deadline/3600, row.overhead, bu.MeanCost, up.MeanCost)
			if bu.DeadlinesMetPct != 100 || bu.MeanCost > up.MeanCost {
				t.Errorf("%s D=%dh d=%ds: bursar-direct $%.4f with %.1f%% of deadlines met; want at most UP's $%.4f and 100%%",
					tab.folder, row.deadline/3600, row.overhead, bu.MeanCost, bu.DeadlinesMetPct, up.MeanCost)
			}
		}
	}
}

// BenchmarkBursarDirect replays the deadline planner over JOBS.md's folders and settings and
// reports, per setting, its mean cost beside its baselines from the same run: Uniform Progress
// and the hindsight optimum, and the share of the gap from UP to the optimum it closes (the goal
// is at least 50 %).
func BenchmarkBursarDirect(b *testing.B) {
	for _, tab := range refTables {
		ms := refFolder(b, tab.folder)
		for _, row := range tab.rows {
			name := fmt.Sprintf("%s/D=%dh/d=%ds", tab.folder, row.deadline/3600, row.overhead)
			b.Run(name, func(b *testing.B) {
				windows := Windows(ms, tab.windows)
				var res []Result
				for range b.N {
					var err error
					res, err = Evaluate(context.Background(), RefJob(row.deadline, row.overhead), windows,
						[]string{"uniform-progress", "optimal", "bursar-direct"})
					if err != nil {
						b.Fatal(err)
					}
				}
				up, opt, bu := res[0].MeanCost, res[1].MeanCost, res[2].MeanCost
				b.ReportMetric(bu, "bursar_$")
				b.ReportMetric(up, "up_$")
				b.ReportMetric(opt, "optimal_$")
				b.ReportMetric(100*(up-bu)/(up-opt), "gap_closed_%")
				b.ReportMetric(res[2].DeadlinesMetPct, "met_%")
			})
		}
	}
}
