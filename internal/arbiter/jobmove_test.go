package arbiter_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
)

// movingJob is a stepped service over jobYAML with 69 minutes for the hour's work, spot only in
// zone a, and no spot capacity there: the job tries spot once and then must run on on-demand.
// After 39 minutes (on-demand runs), the job reports 40 minutes done: it was further than the
// arbiter estimated, within what the time since its first launch allows, and has slack to spend
// on spot again.
type movingJob struct {
	h        *harness
	svc      *arbiter.Service
	spot, od actuate.Group
}

func newMovingJob(t *testing.T) *movingJob {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := newHarness(t, strings.Replace(jobYAML, "deadline_in: 3h", "deadline_in: 69m", 1))
	h.sim.SetCapacity("a", 0)
	svc := h.steppedJob(ctx, t)
	m := &movingJob{h: h, svc: svc, spot: actuate.Group{Workload: "tune", Location: "a", Market: events.Spot},
		od: actuate.Group{Workload: "tune", Location: "a", Market: events.OnDemand}}
	for i := 0; !m.ready(m.od) || h.clock.Now().Before(t0.Add(39*time.Minute)); i++ {
		if i == 60 {
			t.Fatalf("no on-demand instance ready after an hour; lives %+v", h.sim.Lives())
		}
		m.round()
	}
	at := h.clock.Now()
	p := &events.JobProgress{Meta: events.Meta{At: at}, Job: "tune", WorkDoneS: (40 * time.Minute).Seconds(), CheckpointAt: &at,
		Location: "a", Market: events.OnDemand}
	if err := h.pub.Publish(ctx, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the report is folded", func() bool { return svc.JobReported("tune") })
	return m
}

func (m *movingJob) round() {
	m.svc.Step(context.Background())
	m.h.clock.Advance(jobStep)
}

// ready says whether the sim runs a ready instance of g.
func (m *movingJob) ready(g actuate.Group) bool {
	return slices.ContainsFunc(m.h.sim.Lives(), func(l sim.Life) bool { return l.Group == g && !l.Ready.IsZero() && l.Gone.IsZero() })
}

// lives are the sim's instances of g, in launch order.
func (m *movingJob) lives(g actuate.Group) []sim.Life {
	var out []sim.Life
	for _, l := range m.h.sim.Lives() {
		if l.Group == g {
			out = append(out, l)
		}
	}
	return out
}

// probes counts the calls that asked the sim for spot for the job.
func (m *movingJob) probes() int {
	n := 0
	for _, c := range m.h.sim.Calls() {
		if c.Group == m.spot && c.Replicas > 0 {
			n++
		}
	}
	return n
}

// TestJobMoveOntoSpotWithNoCapacityKeepsOnDemand: a job on on-demand with slack to spend tries
// spot, finds no capacity, and goes on running on its on-demand instance the whole time, never
// idle. A move used to stop on-demand first: each try that found none left the job idle a round
// and then paid a new on-demand launch.
func TestJobMoveOntoSpotWithNoCapacityKeepsOnDemand(t *testing.T) {
	m := newMovingJob(t)
	before := m.probes()
	for range 10 {
		m.round()
		if st := m.svc.JobState("tune"); st != events.JobRunning {
			t.Fatalf("at %v the job is %q, want running", m.h.clock.Now(), st)
		}
	}
	if m.probes() <= before {
		t.Fatalf("no spot launch was tried in 10 rounds; calls %+v", m.h.sim.Calls())
	}
	od := m.lives(m.od)
	if len(od) != 1 || !od[0].Gone.IsZero() {
		t.Errorf("on-demand instances %+v, want the one, still running", od)
	}
}

// TestJobMoveThatGetsCapacityRetiresTheOld: spot comes back after tries that found none; the
// move's launch gets capacity and only then is the on-demand instance retired, so the job always
// had an instance with capacity, one on-demand instance all along, and runs on spot after.
func TestJobMoveThatGetsCapacityRetiresTheOld(t *testing.T) {
	m := newMovingJob(t)
	for range 4 {
		m.round()
	}
	m.h.sim.SetCapacity("a", 1)
	for i := 0; !slices.ContainsFunc(m.lives(m.od), func(l sim.Life) bool { return !l.Gone.IsZero() }); i++ {
		if i == 10 {
			t.Fatalf("the job did not move in 10 rounds; lives %+v", m.h.sim.Lives())
		}
		m.round()
	}
	od, spot := m.lives(m.od), m.lives(m.spot)
	if len(od) != 1 || len(spot) == 0 || od[0].Gone.Before(spot[len(spot)-1].Launched) {
		t.Fatalf("on-demand %+v, spot %+v: want one on-demand instance, retired once spot got capacity", od, spot)
	}
	m.round()
	if st := toldJobState(t, m.h.env.JS, m.svc, "tune"); st.State != events.JobRunning || st.Market != events.Spot {
		t.Errorf("job.state %+v, want running on spot", st)
	}
}

// TestWaitingJobTriesSpotEveryRound: an idle job the planner has wait for spot tries it again
// at every round, though the last try found no capacity: a try that finds none leaves it as idle
// as waiting does and costs nothing. It used to skip the round after each failure, so it took
// spot one round late when it came back.
func TestWaitingJobTriesSpotEveryRound(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, jobYAML) // three hours for an hour's work: it waits a long while for spot
	h.sim.SetCapacity("a", 0)
	svc := h.steppedJob(ctx, t)
	m := &movingJob{h: h, svc: svc, spot: actuate.Group{Workload: "tune", Location: "a", Market: events.Spot}}
	for round := range 10 {
		before := m.probes()
		m.round()
		if m.probes() != before+1 || svc.JobState("tune") == events.JobRunning {
			t.Fatalf("round %d: %d spot launches asked (want 1), job %q (want it waiting); calls %+v",
				round, m.probes()-before, svc.JobState("tune"), h.sim.Calls())
		}
	}
}
