package fleet_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// jobBase is base with a job beside the serving workload.
const jobBase = base + `  - name: tune
    kind: job
    gpu: {models: [H100-80GB], count: 1}
    markets: [spot, on_demand]
    job: {work: 48h, deadline_in: 52h, overhead: 3m, priority: 2}
`

// TestJobIsAccepted: a workload of kind job (there was none) carries its work, deadline,
// overhead and priority; the serving workload beside it is not a job.
func TestJobIsAccepted(t *testing.T) {
	cfg, err := fleet.Parse([]byte(jobBase), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := cfg.Workload("tune")
	if !w.IsJob() || w.Job == nil {
		t.Fatalf("tune = %+v, want a job", w)
	}
	want := fleet.Job{Work: 48 * time.Hour, DeadlineIn: 52 * time.Hour, Overhead: 3 * time.Minute, Priority: 2}
	if *w.Job != want {
		t.Errorf("job = %+v, want %+v", *w.Job, want)
	}
	sub := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if got := w.Job.Deadline(sub); !got.Equal(sub.Add(52 * time.Hour)) {
		t.Errorf("Deadline = %v, want submission + 52h", got)
	}
	if svc, _ := cfg.Workload("svc"); svc.IsJob() {
		t.Error("svc, of no kind, is a job")
	}
	if w.KubeKind() != fleet.KubeJob {
		t.Errorf("KubeKind = %q, want Job", w.KubeKind())
	}
}

func TestJobDeadlineAt(t *testing.T) {
	y := strings.Replace(jobBase, "deadline_in: 52h", "deadline_at: 2026-12-04T06:00:00Z", 1)
	cfg, err := fleet.Parse([]byte(y), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := cfg.Workload("tune")
	at := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	if got := w.Job.Deadline(time.Time{}); !got.Equal(at) {
		t.Errorf("Deadline = %v, want %v whatever the submission", got, at)
	}
}

// TestBadJobsSayWhereAndWhat: each malformed job fails with the file, the line and the field.
func TestBadJobsSayWhereAndWhat(t *testing.T) {
	const line = 14 // the job: line of jobBase
	tests := []struct {
		name     string
		yaml     string
		wantLine int
		want     string
	}{
		{"unknown kind", strings.Replace(jobBase, "kind: job", "kind: batch", 1), 11, `field workloads[1].kind: unknown kind "batch"`},
		{"no job", strings.Replace(jobBase, "    job: {work: 48h, deadline_in: 52h, overhead: 3m, priority: 2}\n", "", 1), 0,
			"field workloads[1].job: required for kind: job"},
		{"job on a serving workload", base + "    job: {work: 1h, deadline_in: 2h}\n", 10, "field workloads[0].job: job: applies to kind: job only"},
		{"replicas on a job", jobBase + "    replicas: {min: 1, max: 1}\n", 15, "field workloads[1].replicas: a job runs one replica"},
		{"scaling on a job", jobBase + "    scaling: {metric: gpu_utilization, per_replica: 80}\n", 15, "field workloads[1].scaling: a job is not scaled"},
		{"no work", strings.Replace(jobBase, "work: 48h, ", "", 1), line, "field workloads[1].job.work: want the compute"},
		{"both deadlines", strings.Replace(jobBase, "deadline_in: 52h", "deadline_in: 52h, deadline_at: 2026-12-04T06:00:00Z", 1), line,
			"give exactly one of deadline_at"},
		{"no deadline", strings.Replace(jobBase, "deadline_in: 52h, ", "", 1), 0, "give exactly one of deadline_at"},
		{"deadline before the work", strings.Replace(jobBase, "deadline_in: 52h", "deadline_in: 40h", 1), line,
			"deadline_in 40h0m0s is shorter than the work 48h0m0s"},
		{"negative deadline", strings.Replace(jobBase, "deadline_in: 52h", "deadline_in: -1h", 1), line, "want a duration from submission"},
		{"deadline in 2200", strings.Replace(jobBase, "deadline_in: 52h", "deadline_at: 2200-01-01T00:00:00Z", 1), line,
			"want a time from 2000-01-01T00:00:00Z to before 2100-01-01T00:00:00Z"},
		{"deadline in a century", strings.Replace(jobBase, "deadline_in: 52h", "deadline_in: 876000h", 1), line, "want at most"},
		{"negative overhead", strings.Replace(jobBase, "overhead: 3m", "overhead: -3m", 1), line, "field workloads[1].job.overhead"},
		{"bad work unit", strings.Replace(jobBase, "work: 48h", "work: 2 days", 1), line, "want a duration"},
		{"bad deadline time", strings.Replace(jobBase, "deadline_in: 52h", "deadline_at: friday", 1), line, "want an RFC 3339 time"},
		{"unknown job field", strings.Replace(jobBase, "priority: 2", "prio: 2", 1), line, `unknown field "prio" in a job`},
		{"a job as a deployment", jobBase + "    kubernetes: {kind: Deployment, spot: t}\n", 15, "a job runs as a batch/v1 Job"},
		{"a service as a job", base + "    kubernetes: {kind: Job, spot: t}\n", 10, `unknown kind "Job"; want Deployment or StatefulSet`},
		{"kube job without object", strings.Replace(strings.Replace(jobBase, "{kind: sim}", "{kind: kubernetes, context: c}", 1),
			"{min: 1}\n", "{min: 1}\n    markets: [on_demand]\n    kubernetes: {on_demand: svc}\n", 1) + "    kubernetes: {spot: t-spot}\n", 0, "name the Job object that holds on_demand replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fleet.Parse([]byte(tt.yaml), "bursar.yaml")
			var fe *fleet.Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *fleet.Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if tt.wantLine > 0 && fe.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", fe.Line, tt.wantLine, err)
			}
		})
	}
}

// TestParseJob: a job file is one workload, kind job by default, checked alone (nil fleet) or
// against a fleet; its errors name the file, the line and the field within the job.
func TestParseJob(t *testing.T) {
	const job = "name: tune\ngpu: {models: [H100-80GB], count: 1}\nresidency: [eu]\njob: {work: 2h, deadline_in: 3h}\n"
	w, err := fleet.ParseJob([]byte(job), "job.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !w.IsJob() || w.Job.Work != 2*time.Hour {
		t.Errorf("job = %+v", w)
	}
	cfg, err := fleet.Parse([]byte(base), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, yaml string
		cfg        *fleet.Config
		wantLine   int
		want       string
	}{
		{"residency no location has", job, cfg, 3, "job.yaml:3: field residency: no location satisfies residency eu"},
		{"a serving workload", "kind: serving\n" + job, nil, 1, "field kind: want kind job"},
		{"replicas", job + "replicas: {min: 1}\n", nil, 5, "field replicas: a job runs one replica"},
		{"bad work", strings.Replace(job, "work: 2h", "work: 0s", 1), nil, 4, "field job.work"},
		{"unknown field", job + "deadline: 3h\n", nil, 5, `unknown field "deadline"`},
		{"empty", "", nil, 0, "job.yaml: the file is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fleet.ParseJob([]byte(tt.yaml), "job.yaml", tt.cfg)
			var fe *fleet.Error
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a *fleet.Error containing %q", err, tt.want)
			}
			if tt.wantLine > 0 && fe.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", fe.Line, tt.wantLine, err)
			}
		})
	}
}

// TestCheckJobRefusesAWorkloadsName: a submitted job may not take a bursar.yaml workload's name.
func TestCheckJobRefusesAWorkloadsName(t *testing.T) {
	cfg, err := fleet.Parse([]byte(jobBase), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := cfg.Workload("tune")
	j := *w
	if err := cfg.CheckJob(&j); err == nil || !strings.Contains(err.Error(), "has that name") {
		t.Errorf("CheckJob(tune) = %v, want the name refused", err)
	}
	j.Name = "tune-2"
	if err := cfg.CheckJob(&j); err != nil {
		t.Errorf("CheckJob(tune-2) = %v", err)
	}
}

func FuzzParseJob(f *testing.F) {
	f.Add([]byte("name: tune\ngpu: {models: [H100-80GB], count: 1}\njob: {work: 2h, deadline_in: 3h}\n"))
	f.Add([]byte("name: t\ngpu: {count: 1, min_memory_gb: 80}\njob: {work: 1h, deadline_at: 2026-12-04T06:00:00Z}\n"))
	f.Add([]byte("kind: serving\nname: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := fleet.ParseJob(data, "fuzz.yaml", nil)
		if err == nil && (!w.IsJob() || w.Job == nil || w.Job.Work <= 0) {
			t.Fatalf("accepted a job with no work: %+v", w)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz.yaml") {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}
