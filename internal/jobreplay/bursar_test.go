package jobreplay

import (
	"context"
	"flag"
	"fmt"
	"slices"
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

// TestBursarDirectZones: the same job allowed in every zone of a folder (each zone its own
// spot), the planner meets every deadline and costs no more than Uniform Progress there.
func TestBursarDirectZones(t *testing.T) {
	for _, tab := range refTables {
		m, err := Join(tab.folder, refFolder(t, tab.folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range tab.rows {
			res, err := Evaluate(context.Background(), RefJob(row.deadline, row.overhead), Windows([]Market{m}, tab.windows),
				[]string{"uniform-progress", "bursar-direct"})
			if err != nil {
				t.Fatal(err)
			}
			up, bu := res[0], res[1]
			t.Logf("%s, all zones, D=%dh d=%ds: bursar-direct $%.2f, UP $%.2f", tab.folder, row.deadline/3600, row.overhead, bu.MeanCost, up.MeanCost)
			if bu.DeadlinesMetPct != 100 || bu.MeanCost > up.MeanCost {
				t.Errorf("%s, all zones, D=%dh d=%ds: bursar-direct $%.4f with %.1f%% of deadlines met; want at most UP's $%.4f and 100%%",
					tab.folder, row.deadline/3600, row.overhead, bu.MeanCost, bu.DeadlinesMetPct, up.MeanCost)
			}
		}
	}
}

var benchOptimal = flag.Bool("bursar.optimal", true, "BenchmarkBursarDirect: measure the hindsight optimum too")

// BenchmarkBursarDirect replays the deadline planner over JOBS.md's folders and settings and
// reports, per setting, its mean cost beside its baselines from the same run: Uniform Progress
// and, where the hindsight optimum is registered, the optimum and the share of the gap from UP
// to it that the planner closes (the goal is at least 50 %). The optimum takes minutes a
// setting on 32 s ticks; -bursar.optimal=false leaves it out.
func BenchmarkBursarDirect(b *testing.B) {
	policies := []string{"uniform-progress", "bursar-direct"}
	if *benchOptimal && slices.Contains(PolicyNames(), "optimal") {
		policies = append(policies, "optimal")
	}
	for _, tab := range refTables {
		ms := refFolder(b, tab.folder)
		for _, row := range tab.rows {
			name := fmt.Sprintf("%s/D=%dh/d=%ds", tab.folder, row.deadline/3600, row.overhead)
			b.Run(name, func(b *testing.B) {
				windows := Windows(ms, tab.windows)
				var res []Result
				for range b.N {
					var err error
					res, err = Evaluate(context.Background(), RefJob(row.deadline, row.overhead), windows, policies)
					if err != nil {
						b.Fatal(err)
					}
				}
				up, bu := res[0].MeanCost, res[1].MeanCost
				b.ReportMetric(bu, "bursar_$")
				b.ReportMetric(up, "up_$")
				b.ReportMetric(res[1].DeadlinesMetPct, "met_%")
				if len(res) > 2 {
					opt := res[2].MeanCost
					b.ReportMetric(opt, "optimal_$")
					b.ReportMetric(100*(up-bu)/(up-opt), "gap_closed_%")
				}
			})
		}
	}
}

// TestBursarDirectForgets: a zone that ran spot steadily for a day and then flaps (reclaimed
// every other tick for 3 hours) is estimated by what it does now: its hazard is more than twice
// the 0.37 reclaims an hour that counting the whole day alike gives ((9 + 1.5) / (25.5 + 3)).
func TestBursarDirectForgets(t *testing.T) {
	p, err := newBursarDirect(Env{Setting: RefJob(52*3600, 180).setting(600), Zones: []string{"z"}})
	if err != nil {
		t.Fatal(err)
	}
	pd := p.(*bursarDirect)
	for range 144 {
		pd.observe([]bool{true})
	}
	for k := range 18 {
		pd.observe([]bool{k%2 == 0})
	}
	if h := pd.offers[1].Hazard; h < 0.75 {
		t.Errorf("hazard after 3 h of flapping = %.2f reclaims/h, want more than 0.75", h)
	}
}
