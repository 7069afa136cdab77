package jobs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/jobs"
)

const fleetYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, actuator: {kind: sim}}
workloads:
  - {name: svc, gpu: {models: [H100-80GB], count: 1}, replicas: {min: 1}}
  - name: tune
    kind: job
    gpu: {models: [H100-80GB], count: 1}
    job: {work: 1h, deadline_in: 3h}
`

var t0 = time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)

func parseFleet(t *testing.T) *fleet.Config {
	t.Helper()
	cfg, err := fleet.Parse([]byte(fleetYAML), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func bucket(t *testing.T, js jetstream.JetStream) jetstream.KeyValue {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), bus.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// TestSubmitCancelAndLoad: a submission asked over the bus is stored with the asking user and
// the time; a second one of the same name, a job named as a workload and a cancel of an unknown
// job are refused; a cancel marks the job cancelled, and Load (as the CLI reads, read-only) lists
// it with its run.
func TestSubmitCancelAndLoad(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	sub, err := jobs.Serve(ctx, env.JS, parseFleet(t), func() time.Time { return t0 }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	nc, js := env.ConnectAs(t, bus.RoleBudget)
	c, err := jobs.NewClient(nc, bus.RoleBudget)
	if err != nil {
		t.Fatal(err)
	}
	w, err := fleet.ParseJob([]byte("name: eval\ngpu: {models: [H100-80GB], count: 1}\njob: {work: 2h, deadline_in: 6h}\n"), "job.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := c.Submit(ctx, *w)
	if err != nil {
		t.Fatal(err)
	}
	if spec.By != bus.RoleBudget || !spec.SubmittedAt.Equal(t0) || !spec.Deadline().Equal(t0.Add(6*time.Hour)) {
		t.Errorf("stored %+v, want submitted by %s at %v, due 6 h later", spec, bus.RoleBudget, t0)
	}
	if _, err := c.Submit(ctx, *w); err == nil || !strings.Contains(err.Error(), "already submitted") {
		t.Errorf("a second submission: err = %v, want it refused", err)
	}
	svc := *w
	svc.Name = "svc"
	if _, err := c.Submit(ctx, svc); err == nil || !strings.Contains(err.Error(), "has that name") {
		t.Errorf("a job named as a workload: err = %v, want it refused", err)
	}
	if err := c.Cancel(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no job "nope"`) {
		t.Errorf("cancelling an unknown job: err = %v", err)
	}
	if err := c.Cancel(ctx, "eval"); err != nil {
		t.Fatal(err)
	}
	if _, err := bucket(t, env.JS).Put(ctx, jobs.StateKey("eval"), []byte(`{"state":"running","done":60000000000}`)); err != nil {
		t.Fatal(err)
	}
	recs, err := jobs.Load(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Spec.Workload.Name != "eval" || !recs[0].Spec.Cancelled ||
		recs[0].Run.State != events.JobRunning || recs[0].Run.Done != time.Minute {
		t.Errorf("Load = %+v, want eval cancelled, running with a minute done", recs)
	}
}

// TestEnsureSpecRestoresACorruptSubmission: a job of bursar.yaml is stored once (a restart
// keeps its first submission time); one whose key holds something else is reported through
// OnCorrupt and written over, submitted now.
func TestEnsureSpecRestoresACorruptSubmission(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	type report struct{ key, action string }
	var got []report
	kv := jobs.KV{KV: bucket(t, env.JS), OnCorrupt: func(e jetstream.KeyValueEntry, err error, action string) {
		got = append(got, report{e.Key(), action})
	}}
	cfg := parseFleet(t)
	specs := jobs.FromConfig(cfg, t0)
	if len(specs) != 1 || specs[0].Workload.Name != "tune" || specs[0].By != "bursar.yaml" {
		t.Fatalf("FromConfig = %+v, want tune from bursar.yaml", specs)
	}
	if err := kv.EnsureSpec(ctx, specs[0]); err != nil {
		t.Fatal(err)
	}
	if err := kv.EnsureSpec(ctx, jobs.FromConfig(cfg, t0.Add(time.Hour))[0]); err != nil {
		t.Fatal(err)
	}
	if spec := loadSpec(t, kv, "tune"); !spec.SubmittedAt.Equal(t0) || len(got) != 0 {
		t.Errorf("after a restart: submitted at %v (reports %v), want %v and none", spec.SubmittedAt, got, t0)
	}

	if _, err := kv.KV.Put(ctx, jobs.SpecKey("tune"), []byte(`{"stream":"KV_bursar_jobs","seq":3}`)); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(2 * time.Hour)
	if err := kv.EnsureSpec(ctx, jobs.FromConfig(cfg, later)[0]); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].key != "job.tune" || got[0].action != "restored from bursar.yaml, submitted now" {
		t.Errorf("reports = %v, want job.tune restored from bursar.yaml", got)
	}
	if spec := loadSpec(t, kv, "tune"); !spec.SubmittedAt.Equal(later) {
		t.Errorf("restored submission at %v, want %v", spec.SubmittedAt, later)
	}
}

func loadSpec(t *testing.T, kv jobs.KV, name string) jobs.Spec {
	t.Helper()
	e, err := kv.KV.Get(context.Background(), jobs.SpecKey(name))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := jobs.DecodeSpec(e.Key(), e.Value())
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestLoadRunsAndRestoreSpec: LoadRuns gives every run key's revision, with whether it holds a
// run; RestoreSpec writes only over the revision it was given.
func TestLoadRunsAndRestoreSpec(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	kv := jobs.KV{KV: bucket(t, env.JS)}
	good, err := kv.KV.Put(ctx, jobs.StateKey("a"), []byte(`{"state":"waiting"}`))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := kv.KV.Put(ctx, jobs.StateKey("b"), []byte(`{"state":"exploded"}`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := kv.LoadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := runs["state.a"], runs["state.b"]
	if len(runs) != 2 || !a.OK || a.Rev != good || a.Run.State != events.JobWaiting || b.OK || b.Rev != bad {
		t.Errorf("LoadRuns = %+v, want state.a a run at %d and state.b not one at %d", runs, good, bad)
	}
	if err := jobs.CheckRun("state.b", []byte(`{"state":"exploded"}`)); err == nil {
		t.Error("CheckRun took a run with an unknown state")
	}

	spec := jobs.FromConfig(parseFleet(t), t0)[0]
	rev, err := kv.KV.Put(ctx, jobs.SpecKey("tune"), []byte(`null`))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := kv.RestoreSpec(ctx, spec, rev+1); ok || err != nil {
		t.Errorf("RestoreSpec at a revision not found = %v, %v; want false, nil", ok, err)
	}
	if ok, err := kv.RestoreSpec(ctx, spec, rev); !ok || err != nil {
		t.Errorf("RestoreSpec = %v, %v; want true", ok, err)
	}
	if got := loadSpec(t, kv, "tune"); got.Workload.Name != "tune" {
		t.Errorf("restored %+v", got)
	}
}
