package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// jobState is one recorded job.state; finished is "" while the job has not finished.
type jobState struct {
	id, at, job, team, state string
	workH, doneH             float64
	deadline                 string
	overheadS                float64
	location, market         string
	gpus                     int
	usdPerHour, onDemand     float64
	spent                    float64
	preemptions              int
	lostS                    float64
	finished                 string
}

// day is a time of 2026-11-30 ("10:30") or of a later day ("12-01 10:30"), UTC.
func day(s string) time.Time {
	if len(s) > 5 {
		t, err := time.Parse("2006-01-02 15:04", "2026-"+s)
		if err != nil {
			panic(err)
		}
		return t.UTC()
	}
	return at(s)
}

func seedJobs(t *testing.T, st *store.Store, states ...jobState) {
	t.Helper()
	rows := make([][]any, len(states))
	for i, s := range states {
		finished := `\N`
		if s.finished != "" {
			finished = tsv(day(s.finished))
		}
		rows[i] = []any{s.id, day(s.at), "1.0", s.job, s.team, s.state, s.workH * 3600, s.doneH * 3600,
			day(s.deadline), s.overheadS, s.location, s.market, s.gpus, s.usdPerHour, s.onDemand, s.spent,
			s.preemptions, s.lostS, finished, ""}
	}
	seed(t, st, "job_state", "id, at, version, job, team, state, work_s, work_done_s, deadline, overhead_s, "+
		"location, market, gpus_per_replica, usd_per_hour, on_demand_usd_per_hour, usd_spent, preemptions, lost_s, "+
		"finished_at, reason", rows...)
}

// jobHistory is the known history of the jobs tests, worked by hand in TestJobs:
//
//	ft-a (research): 2 h of work, 3 min overhead, due 14:00. Spot on aws-use1 (2 GPUs, $4/h)
//	  08:00-09:02 (notice at 09:00), waits, on-demand on gcp-usc1 ($10/h) from 09:30 (ready at
//	  09:35) to 10:30, finished 10:30. Its replica.state prices it: 62 min at $4 + 55 min at $10
//	  = $13.30, 117 min x 2 GPUs = 3.9 GPU-h (its states alone would say 122 min, 4.067 GPU-h).
//	ft-b (research): 4 h of work, 12 min overhead, due 12:00, on-demand $3/h. Spot (1 GPU)
//	  09:00-11:00, preempted, waiting since: past due at 12:30. No replica.state: the arbiter's
//	  $2 and 2 GPU-h from its states.
//	ft-c (vision): 10 h of work, due tomorrow, on-demand (4 GPUs) since 10:00, no on-demand
//	  price in its events: $5 so far, 10 GPU-h by 12:30.
//	old (research) finished before the window; later (vision) is submitted after 12:30.
func jobHistory(t *testing.T) *store.Store {
	st := storetest.New(t)
	seedReplicas(t, st,
		replicaSample{"08:00", "ft-a", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 2, 1, 4},
		replicaSample{"09:02", "ft-a", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 2, 0, 4},
		replicaSample{"09:35", "ft-a", "gcp-usc1", "gcp", "on_demand", gcpOD, "A100-80GB", 2, 1, 10},
		replicaSample{"10:30", "ft-a", "gcp-usc1", "gcp", "on_demand", gcpOD, "A100-80GB", 2, 0, 10},
	)
	a := jobState{job: "ft-a", team: "research", workH: 2, deadline: "14:00", overheadS: 180, onDemand: 10}
	b := jobState{job: "ft-b", team: "research", workH: 4, deadline: "12:00", overheadS: 720, onDemand: 3}
	c := jobState{job: "ft-c", team: "vision", workH: 10, deadline: "12-01 10:00", overheadS: 180}
	seed(t, st, "price_observed", "id, at, version, provider, region, zone, instance_type, gpu_model, gpu_count, "+
		"gpu_memory_gb, market, usd_per_hour, source",
		[]any{"p1", at("08:00"), "1", "gcp", "us-central1", "", "a2-ultragpu-1g", "A100-80GB", 1, 80, "on_demand", 3, "gcp"},
		[]any{"p2", at("08:00"), "1", "gcp", "us-central1", "", "a2-ultragpu-1g", "A100-80GB", 1, 80, "spot", 1, "gcp"},
		// seen after the report's end: not a price the job had
		[]any{"p3", at("12:45"), "1", "gcp", "us-central1", "", "a2-ultragpu-2g", "A100-80GB", 2, 80, "on_demand", 2, "gcp"},
	)
	seedJobs(t, st,
		a.as("a1", "08:00", "submitted", 0), a.as("a2", "08:00", "running", 0).on("aws-use1", "spot", 2, 4),
		a.as("a3", "09:00", "checkpointing", 1).on("aws-use1", "spot", 2, 4),
		a.as("a4", "09:02", "waiting", 1.05).lost(1, 180+120, 4.13),
		a.as("a5", "09:30", "running", 1.05).on("gcp-usc1", "on_demand", 2, 10).lost(1, 300, 4.13),
		a.as("a6", "10:30", "finished", 2).on("gcp-usc1", "on_demand", 2, 10).lost(1, 540, 14.13).done("10:30"),
		b.as("b1", "09:00", "running", 0).on("aws-use1", "spot", 1, 1),
		b.as("b2", "11:00", "waiting", 1.8).lost(1, 720, 2),
		c.as("c1", "10:00", "running", 0).on("gcp-usc1", "on_demand", 4, 2).lost(0, 0, 5),
		jobState{id: "o1", at: "06:00", job: "old", team: "research", state: "finished", workH: 1, doneH: 1,
			deadline: "08:00", finished: "07:00"},
		jobState{id: "l1", at: "12:40", job: "later", team: "vision", state: "submitted", workH: 1, deadline: "18:00"},
	)
	return st
}

func (s jobState) as(id, at, state string, doneH float64) jobState {
	s.id, s.at, s.state, s.doneH = id, at, state, doneH
	return s
}

func (s jobState) on(location, market string, gpus int, usd float64) jobState {
	s.location, s.market, s.gpus, s.usdPerHour = location, market, gpus, usd
	return s
}

func (s jobState) lost(preemptions int, lostS, spent float64) jobState {
	s.preemptions, s.lostS, s.spent = preemptions, lostS, spent
	return s
}

func (s jobState) done(at string) jobState {
	s.finished = at
	return s
}

func TestJobs(t *testing.T) {
	st := jobHistory(t)
	cols := []string{"deadline_met", "finished_at", "gpu_hours", "usd", "on_demand_usd", "savings_usd", "savings_pct",
		"preemptions", "lost_h", "basis"}
	tests := []struct {
		name        string
		since       string
		jobs, teams []string
		fleet       bool // with a fleet file naming ft-c's GPUs
		want        []string
		wantTotal   string
	}{
		{name: "every job active in the window", since: "09:00", want: []string{
			// ft-a: on-demand (2 h + 3 min) x $10 = $20.50, saving 20.50 - 13.30 = 7.20 (35.12 %).
			"ft-a research finished 2026-11-30T14:00:00Z deadline_met=met finished_at=2026-11-30T10:30:00Z gpu_hours=3.9 usd=13.3 on_demand_usd=20.5 savings_usd=7.2 savings_pct=35.1 preemptions=1 lost_h=0.15 basis=estimated",
			// ft-b: (4 h + 12 min) x $3 = $12.60, saving 10.60 (84.13 %); due 12:00, unfinished at 12:30.
			"ft-b research waiting 2026-11-30T12:00:00Z deadline_met=missed finished_at=<nil> gpu_hours=2 usd=2 on_demand_usd=12.6 savings_usd=10.6 savings_pct=84.1 preemptions=1 lost_h=0.2 basis=arbiter",
			"ft-c vision running 2026-12-01T10:00:00Z deadline_met=pending finished_at=<nil> gpu_hours=10 usd=5 on_demand_usd=<nil> savings_usd=<nil> savings_pct=<nil> preemptions=0 lost_h=0 basis=arbiter",
		},
			// 33.10 on-demand against 15.30 paid for the two priced jobs: 17.80 (53.78 %).
			wantTotal: "TOTAL 1/2 met gpu_hours=15.9 usd=20.3 on_demand_usd=33.1 savings_usd=17.8 savings_pct=53.8 preemptions=2 lost_h=0.35"},
		{name: "an on-demand price from the fleet file", since: "09:00", jobs: []string{"ft-c"}, fleet: true, want: []string{
			// 4 A100s at gcp-usc1's $3 per GPU-hour: (10 h + 3 min) x $12 = $120.60, saving 115.60 (95.85 %).
			"ft-c vision running 2026-12-01T10:00:00Z deadline_met=pending finished_at=<nil> gpu_hours=10 usd=5 on_demand_usd=120.6 savings_usd=115.6 savings_pct=95.9 preemptions=0 lost_h=0 basis=arbiter",
		}, wantTotal: "TOTAL 0/0 met gpu_hours=10 usd=5 on_demand_usd=120.6 savings_usd=115.6 savings_pct=95.9 preemptions=0 lost_h=0"},
		{name: "a job that finished before the window is left out", since: "11:00",
			want: []string{"ft-b", "ft-c"}},
		{name: "by team", since: "09:00", teams: []string{"vision"}, want: []string{"ft-c"}},
		{name: "by job", since: "06:00", jobs: []string{"old", "ft-b"}, want: []string{"old", "ft-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := JobOptions{Options: Options{Window: Window{Since: at(tt.since), Until: at("13:00")}, Now: at("12:30")},
				Jobs: tt.jobs, Teams: tt.teams}
			if tt.fleet {
				o.Fleet = testFleet()
				o.Fleet.Workloads = append(o.Fleet.Workloads, fleet.Workload{Name: "ft-c", Kind: "job",
					GPU: fleet.GPU{Models: []string{"H100-80GB", "A100-80GB"}, Count: 4}})
			}
			res, err := Jobs(ctxT(t), st, o)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantTotal == "" {
				var names []string
				for _, r := range res.Rows {
					names = append(names, r["job"].(string))
				}
				if strings.Join(names, " ") != strings.Join(sortedCopy(tt.want), " ") {
					t.Errorf("jobs = %v, want %v", names, sortedCopy(tt.want))
				}
				return
			}
			if g := got(res, cols...); strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
			if g := totalLine(res.Total, cols); g != tt.wantTotal {
				t.Errorf("total\n%s\nwant\n%s", g, tt.wantTotal)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sortStrings(out)
	return out
}

// totalLine prints the total row as got prints rows.
func totalLine(r map[string]any, cols []string) string {
	var b strings.Builder
	b.WriteString(fmt.Sprint(r["job"], " ", r["deadline_met"]))
	for _, c := range cols {
		if v, ok := r[c]; ok && c != "deadline_met" {
			fmt.Fprintf(&b, " %s=%v", c, v)
		}
	}
	return b.String()
}

func TestDeadlineMet(t *testing.T) {
	due := at("12:00").UnixMilli()
	ms := func(hhmm string) *int64 { v := at(hhmm).UnixMilli(); return &v }
	tests := []struct {
		name     string
		state    string
		finished *int64
		end      string
		want     string
	}{
		{"finished early", "finished", ms("11:00"), "13:00", "met"},
		{"finished at the deadline", "finished", ms("12:00"), "13:00", "met"},
		{"finished late", "finished", ms("12:01"), "13:00", "missed"},
		{"running before the deadline", "running", nil, "11:59", "pending"},
		{"waiting at the deadline", "waiting", nil, "12:00", "pending"},
		{"waiting past the deadline", "waiting", nil, "12:01", "missed"},
		{"failed before the deadline", "failed", nil, "11:00", "missed"},
		{"cancelled past the deadline", "cancelled", nil, "13:00", "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := jobRow{State: tt.state, DeadlineMS: due, FinishedMS: tt.finished}
			if got := deadlineMet(r, at(tt.end).UnixMilli()); got != tt.want {
				t.Errorf("deadlineMet = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJobsRefusesGroupingAndFilters(t *testing.T) {
	st := storetest.New(t)
	for name, o := range map[string]Options{
		"--by":     {Window: Window{Since: at("09:00"), Until: at("10:00")}, By: []Dim{Workload}},
		"--filter": {Window: Window{Since: at("09:00"), Until: at("10:00")}, Filter: Filter{Market: {"spot"}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Jobs(ctxT(t), st, JobOptions{Options: o})
			if err == nil || !strings.Contains(err.Error(), "--job and --team") {
				t.Errorf("err = %v, want one pointing at --job and --team", err)
			}
		})
	}
}
