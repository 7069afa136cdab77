package arbiter_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/jobs"
)

// jobYAML is one job of an hour's work due in three, allowed spot and on-demand in two zones.
const jobYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim, launch_delay: 30s}}
  - {name: b, provider: aws, region: us-east-1, zones: [us-east-1b], actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - name: tune
    kind: job
    gpu: {models: [H100-80GB], count: 1}
    markets: [spot, on_demand]
    cold_start: 30s
    job: {work: 1h, deadline_in: 3h, overhead: 3m}
`

// jobStep is the decision interval of the job tests: each step advances the clock by it, lets the
// actuator report, and plans.
const jobStep = time.Minute

func (h *harness) startJobs() *running {
	return h.start("a1", func(o *arbiter.Options) { o.Interval = jobStep })
}

// step advances one interval and settles.
func (h *harness) step(ctx context.Context, r *running) {
	h.t.Helper()
	h.clock.Advance(jobStep)
	h.settle(ctx, r)
}

// lastJobState is the last job.state the FLEET stream holds for job, waiting a little for the
// first (the arbiter publishes without waiting).
func lastJobState(t *testing.T, js jetstream.JetStream, job string) *events.JobState {
	t.Helper()
	st, err := js.Stream(context.Background(), bus.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	var m *jetstream.RawStreamMsg
	eventually(t, "a job.state of "+job+" is stored", func() bool {
		m, err = st.GetLastMsgForSubject(context.Background(), "bursar.job.state."+job)
		return err == nil
	})
	e, err := events.Decode(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	return e.(*events.JobState)
}

// toldJobState is the last job.state svc published for job, once the FLEET stream holds it. The
// arbiter publishes without waiting, so when a round returns the stream may still hold an older
// one: reading it then was the flake of TestJobRunsOnASteppedService (the job finished in the
// arbiter's table rounds before, its job.state "finished" was stored a few ms later).
func toldJobState(t *testing.T, js jetstream.JetStream, svc *arbiter.Service, job string) *events.JobState {
	t.Helper()
	id := svc.JobToldID(job)
	var e *events.JobState
	eventually(t, "the last job.state the arbiter published for "+job+" is stored", func() bool {
		e = lastJobState(t, js, job)
		return e.ID == id
	})
	return e
}

// TestJobIsPreemptedCheckpointedMovedAndFinishesOnTime is the live path of a job (there was none:
// the arbiter placed serving replicas only): it starts on the cheapest spot, a reclaim notice
// reaches its instance, the sim is asked to checkpoint it before anything else, the job moves to
// the other zone's spot, and it finishes before its deadline, as its last job.state says.
func TestJobIsPreemptedCheckpointedMovedAndFinishesOnTime(t *testing.T) {
	ctx := context.Background()
	h, r, aSpot := startPricedJobs(t, jobYAML)
	for range 30 {
		h.step(ctx, r)
	}
	first := runningGroups(h)
	if want := (actuate.Group{Workload: "tune", Location: "a", Market: events.Spot}); !slices.Equal(first, []actuate.Group{want}) {
		t.Fatalf("the job runs on %v, want %v (the cheapest spot)", first, want)
	}

	h.price("us-east-1a", events.Spot, 2.0) // spot in a gets dear as its capacity goes
	eventually(t, "the new price is known", func() bool { return r.KnowsPrice(aSpot, 2.0) })
	notice, ok := h.sim.Reclaim("a", 2*time.Minute)
	if !ok {
		t.Fatal("no spot instance to reclaim in a")
	}
	h.sim.SetCapacity("a", 0) // and a relaunch there would find none
	if err := h.pub.Publish(ctx, notice); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the sim is asked to checkpoint the job", func() bool { return len(h.sim.Checkpoints()) == 1 })
	cp := h.sim.Checkpoints()[0]
	if cp.Target.Group != first[0] || !cp.At.Equal(notice.NoticeAt) {
		t.Errorf("checkpoint = %+v, want one for %v at the notice (%v)", cp, first[0], notice.NoticeAt)
	}

	deadline := t0.Add(3 * time.Hour)
	for h.clock.Now().Before(deadline.Add(time.Hour)) && lastJobState(t, h.env.JS, "tune").State != events.JobFinished {
		h.step(ctx, r)
	}
	moved := slices.ContainsFunc(h.sim.Lives(), func(l sim.Life) bool {
		return l.Group.Workload == "tune" && l.Group != first[0] && !l.Launched.Before(cp.At) && !l.Ready.IsZero()
	})
	if !moved {
		t.Errorf("the job never ran elsewhere after the checkpoint; lives: %+v", h.sim.Lives())
	}
	e := lastJobState(t, h.env.JS, "tune")
	if e.State != events.JobFinished || e.FinishedAt == nil || e.FinishedAt.After(deadline) {
		t.Fatalf("last job.state = %+v, want finished by %v", e, deadline)
	}
	if e.Preemptions != 1 || e.WorkDoneS != time.Hour.Seconds() || e.USDSpent <= 0 || e.OnDemandUSD != 3.0 || e.GPUs != 1 {
		t.Errorf("last job.state = %+v, want 1 preemption, 3600 s done, some cost, on-demand at $3/h, 1 GPU", e)
	}
	if g := runningGroups(h); len(g) != 0 {
		t.Errorf("a finished job still runs on %v", g)
	}
}

// startPricedJobs starts an arbiter on fleetYAML (zones a and b, as jobYAML's), spot cheaper in a
// (1.0/h, aSpot) than in b (1.2/h) and on-demand at 3.0/h in both, once it leads and knows them.
func startPricedJobs(t *testing.T, fleetYAML string) (h *harness, r *running, aSpot string) {
	t.Helper()
	h = newHarness(t, fleetYAML)
	aSpot = h.price("us-east-1a", events.Spot, 1.0)
	h.price("us-east-1b", events.Spot, 1.2)
	h.price("us-east-1a", events.OnDemand, 3.0)
	h.price("us-east-1b", events.OnDemand, 3.0)
	r = h.startJobs()
	eventually(t, "leading", r.Leading)
	eventually(t, "the prices are known", func() bool { return r.KnowsPrice(aSpot, 1.0) })
	return h, r, aSpot
}

// runningGroups are the job's groups the sim holds instances for.
func runningGroups(h *harness) []actuate.Group {
	var out []actuate.Group
	obs, _ := h.sim.Observe(context.Background())
	for _, o := range obs {
		if o.Workload == "tune" && o.Desired > 0 {
			out = append(out, o.Group)
		}
	}
	return out
}

// submitYAML is a fleet of one serving workload: jobs come over the bus.
const submitYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - name: svc
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 0, max: 0}
`

// TestJobSubmittedOverTheBusRunsAndCancelStopsIt: "arbiter job submit" asks the arbiter on the
// bus as the CLI's role; the job is stored with its submitter and time, runs, and a cancel stops
// its instance; a restarted arbiter finds it cancelled with its submission time unchanged.
func TestJobSubmittedOverTheBusRunsAndCancelStopsIt(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, submitYAML)
	spot := h.price("us-east-1a", events.Spot, 1.0)
	r := h.startJobs()
	eventually(t, "leading", r.Leading)
	eventually(t, "the price is known", func() bool { return r.KnowsPrice(spot, 1.0) }) // a pass plans only then
	nc, js := h.env.ConnectAs(t, bus.RoleBudget)
	c, err := jobs.NewClient(nc, bus.RoleBudget)
	if err != nil {
		t.Fatal(err)
	}
	w, err := fleet.ParseJob([]byte("name: tune\ngpu: {models: [H100-80GB], count: 1}\njob: {work: 2h, deadline_in: 6h}\n"), "job.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := c.Submit(ctx, *w)
	if err != nil {
		t.Fatal(err)
	}
	if spec.By != bus.RoleBudget || !spec.SubmittedAt.Equal(t0) {
		t.Errorf("stored %+v, want submitted by %s at %v", spec, bus.RoleBudget, t0)
	}
	if _, err := c.Submit(ctx, *w); err == nil || !strings.Contains(err.Error(), "already submitted") {
		t.Errorf("a second submission: err = %v, want it refused", err)
	}
	svc := *w
	svc.Name = "svc"
	if _, err := c.Submit(ctx, svc); err == nil || !strings.Contains(err.Error(), "has that name") {
		t.Errorf("a job named as a workload: err = %v, want it refused", err)
	}
	eventually(t, "the arbiter knows the job", func() bool { return r.JobState("tune") != "" })
	for range 3 {
		h.step(ctx, r)
	}
	if g := runningGroups(h); len(g) != 1 {
		t.Fatalf("the submitted job runs on %v, want one group", g)
	}
	if err := c.Cancel(ctx, "tune"); err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no job "nope"`) {
		t.Errorf("cancelling an unknown job: err = %v", err)
	}
	eventually(t, "the arbiter sees the cancel", func() bool { return r.JobCancelled("tune") })
	h.step(ctx, r)
	if g := runningGroups(h); len(g) != 0 {
		t.Errorf("a cancelled job still runs on %v", g)
	}
	eventually(t, "the last job.state says cancelled", func() bool {
		return lastJobState(t, h.env.JS, "tune").State == events.JobCancelled
	})
	eventually(t, "the state is saved", func() bool {
		recs, err := jobs.Load(ctx, js)
		return err == nil && len(recs) == 1 && recs[0].Run.State == events.JobCancelled
	})
	r.stop(t)
	h.clock.Advance(time.Hour)
	r2 := h.start("a2", func(o *arbiter.Options) { o.Interval = jobStep })
	eventually(t, "the new arbiter leads", r2.Leading)
	recs, err := jobs.Load(ctx, js)
	if err != nil || len(recs) != 1 || !recs[0].Spec.SubmittedAt.Equal(t0) || r2.JobState("tune") != events.JobCancelled {
		t.Errorf("after a restart: %+v, %v (state %q), want tune cancelled, submitted at %v", recs, err, r2.JobState("tune"), t0)
	}
}

// TestJobReportedProgressWinsOverTheEstimate: a job.progress the job publishes itself, newer
// than the arbiter's estimate, is its work done (the arbiter estimated from ready time only, less
// the overhead): an hour after its launch, reporting all the work done finishes the job at once,
// at the report's time.
func TestJobReportedProgressWinsOverTheEstimate(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, jobYAML)
	spot := h.price("us-east-1a", events.Spot, 1.0)
	r := h.startJobs()
	eventually(t, "leading", r.Leading)
	eventually(t, "the price is known", func() bool { return r.KnowsPrice(spot, 1.0) }) // a pass plans only then
	for i := 0; r.JobState("tune") != events.JobRunning || h.clock.Now().Before(t0.Add(time.Hour)); i++ {
		if i == 90 {
			t.Fatalf("the job is %q after an hour of rounds, want running", r.JobState("tune"))
		}
		h.step(ctx, r)
	}
	at := h.clock.Now()
	p := &events.JobProgress{Meta: events.Meta{At: at}, Job: "tune", WorkDoneS: time.Hour.Seconds(), CheckpointAt: &at,
		Location: "a", Market: events.Spot}
	if err := h.pub.Publish(ctx, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the report is folded", func() bool { return r.JobReported("tune") })
	h.step(ctx, r)
	eventually(t, "the last job.state says finished", func() bool {
		return lastJobState(t, h.env.JS, "tune").State == events.JobFinished
	})
	e := lastJobState(t, h.env.JS, "tune")
	if e.State != events.JobFinished || e.WorkDoneS != time.Hour.Seconds() || e.FinishedAt == nil || !e.FinishedAt.Equal(at) {
		t.Errorf("job.state = %+v, want finished at the report (%v)", e, at)
	}
}

// TestJobRunsOnASteppedService: a service driven round by round (Start and Step: the replay,
// the demo, the soak) plans its jobs too; it never read the jobs bucket, so a job in bursar.yaml
// sat there, never launched.
func TestJobRunsOnASteppedService(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, jobYAML)
	svc := h.steppedJob(ctx, t)
	for range 90 {
		svc.Step(ctx)
		h.clock.Advance(jobStep)
	}
	e := toldJobState(t, h.env.JS, svc, "tune")
	if e.State != events.JobFinished || e.FinishedAt == nil || e.FinishedAt.After(t0.Add(3*time.Hour)) {
		t.Errorf("last job.state = %+v, want finished by the deadline", e)
	}
}

// TestJobBehindGoesOnDemandWhenSpotHasNoCapacity: a job's spot launch that finds no capacity is
// given up and, in the same round, the job is placed again with that spot known to have none; a
// job with no time to lose then takes on-demand at once. It used to wait a round for the give-up
// to land, idle, before it was placed again.
func TestJobBehindGoesOnDemandWhenSpotHasNoCapacity(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// 69 minutes for an hour's work and 3.5 minutes of changeover: one round on spot may be tried,
	// the next must be on-demand.
	h := newHarness(t, strings.Replace(jobYAML, "deadline_in: 3h", "deadline_in: 69m", 1))
	h.sim.SetCapacity("a", 0)
	svc := h.steppedJob(ctx, t)
	spot := actuate.Group{Workload: "tune", Location: "a", Market: events.Spot}
	od := actuate.Group{Workload: "tune", Location: "a", Market: events.OnDemand}
	svc.Step(ctx)
	if n, _ := h.sim.Desired(ctx, spot); n != 1 {
		t.Fatalf("first round: spot desired %d, want the cheapest (spot) tried", n)
	}
	h.clock.Advance(jobStep)
	svc.Step(ctx)
	s, _ := h.sim.Desired(ctx, spot)
	o, _ := h.sim.Desired(ctx, od)
	if s != 0 || o != 1 {
		t.Errorf("after spot found no capacity: spot %d, on-demand %d, want 0 and 1", s, o)
	}
}

// steppedJob starts a service over h that runs only when the test calls Step (as the replay,
// the demo and the soak drive it), with spot at 1 and on-demand at 3 USD/h in us-east-1a, both
// zones on the sim, and the job step as its interval.
func (h *harness) steppedJob(ctx context.Context, t *testing.T) *arbiter.Service {
	t.Helper()
	h.price("us-east-1a", events.Spot, 1.0)
	h.price("us-east-1a", events.OnDemand, 3.0)
	_, js := h.env.ConnectAs(t, bus.RoleArbiter)
	svc, err := arbiter.New(ctx, arbiter.Options{Config: h.cfg, JS: js, Actuator: actuate.Router{"a": h.sim, "b": h.sim},
		Clock: h.clock, Identity: "stepped", LeaseTTL: time.Minute, Interval: jobStep})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return svc
}

// threeJobsYAML is three jobs of jobYAML's kind.
const threeJobsYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim, launch_delay: 30s}}
  - {name: b, provider: aws, region: us-east-1, zones: [us-east-1b], actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - {name: tune1, kind: job, gpu: {models: [H100-80GB], count: 1}, markets: [spot, on_demand], cold_start: 30s, job: {work: 1h, deadline_in: 3h, overhead: 3m}}
  - {name: tune2, kind: job, gpu: {models: [H100-80GB], count: 1}, markets: [spot, on_demand], cold_start: 30s, job: {work: 1h, deadline_in: 3h, overhead: 3m}}
  - {name: tune3, kind: job, gpu: {models: [H100-80GB], count: 1}, markets: [spot, on_demand], cold_start: 30s, job: {work: 1h, deadline_in: 3h, overhead: 3m}}
`

// TestReclaimReplansOnlyTheJobItHits: a reclaim's quick answer plans again the job whose instance
// the notice took, not the other jobs (every reclaim answer planned every active job; the next
// full pass plans them all).
func TestReclaimReplansOnlyTheJobItHits(t *testing.T) {
	ctx := context.Background()
	h, r, _ := startPricedJobs(t, threeJobsYAML)
	for range 5 {
		h.step(ctx, r)
	}
	ready := map[actuate.Group]bool{}
	for _, l := range h.sim.Lives() {
		if !l.Ready.IsZero() && l.Gone.IsZero() && l.Group.Location == "a" && l.Group.Market == events.Spot {
			ready[l.Group] = true
		}
	}
	if len(ready) != 3 {
		t.Fatalf("jobs ready on spot in a: %v, want all three", ready)
	}
	before := r.JobPlans()
	notice, ok := h.sim.Reclaim("a", 2*time.Minute)
	if !ok {
		t.Fatal("no spot instance to reclaim in a")
	}
	if err := h.pub.Publish(ctx, notice); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the sim is asked to checkpoint the job hit", func() bool { return len(h.sim.Checkpoints()) == 1 })
	if got := r.JobPlans() - before; got != 1 {
		t.Errorf("the reclaim's answer planned %v jobs, want 1 (the job it hit, %s)", got, h.sim.Checkpoints()[0].Target.Group.Workload)
	}
}
