package report

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/recorder"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// TestJobsFromPublishedEvents follows a job's events the whole way: published on the bus as the
// arbiter publishes them, recorded, and reported. ft-e2e needs 1 h of work (3 min overhead, $6/h
// on-demand, due 12:00) on 4 GPUs: spot from 09:00:30, a notice at 10:00, checkpointed by 10:01,
// on-demand from 10:10, finished at 10:34:30 (the state says so at 10:35). It ran 59.5 + 1 + 25
// min = 85.5 min x 4 GPUs = 5.7 GPU-h; the arbiter counted $4.55 against (1 h + 3 min) x $6 =
// $6.30 on on-demand: a saving of $1.75 (27.8 %).
func TestJobsFromPublishedEvents(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- recorder.New(env.JS, st, recorder.Config{Streams: []string{bus.Fleet}}).Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	base := events.JobState{Job: "ft-e2e", Team: "ml", WorkS: 3600, Deadline: at("12:00"), OverheadS: 180,
		GPUs: 4, OnDemandUSD: 6}
	state := func(hhmm string, s events.JobStatus, market events.Market, done, spent, lost float64, preempted int) events.Event {
		e := base
		e.At, e.State, e.WorkDoneS, e.USDSpent, e.LostS, e.Preemptions = at(hhmm), s, done, spent, lost, preempted
		if market != "" {
			e.Location, e.Market = "aws-use1", market
		}
		return &e
	}
	finished := state("10:35", events.JobFinished, events.OnDemand, 3600, 4.55, 420, 1)
	finished.(*events.JobState).FinishedAt = new(at("10:34:30"))
	sent := []events.Event{
		state("09:00", events.JobSubmitted, "", 0, 0, 0, 0),
		state("09:00:30", events.JobRunning, events.Spot, 0, 0, 0, 0),
		state("10:00", events.JobCheckpointing, events.Spot, 3300, 1.9, 180, 0),
		state("10:01", events.JobWaiting, "", 3300, 2, 240, 1),
		state("10:10", events.JobRunning, events.OnDemand, 3300, 2, 240, 1),
		finished,
		&events.JobProgress{Meta: events.Meta{At: at("10:00:20")}, Job: "ft-e2e", WorkDoneS: 3300,
			CheckpointAt: new(at("10:00:15")), Location: "aws-use1", Market: events.Spot},
	}
	pub := bus.NewPublisher(env.JS)
	for _, e := range sent {
		if err := pub.Publish(ctxT(t), e); err != nil {
			t.Fatal(err)
		}
	}
	waitRows(t, st, "job_state", 6)
	waitRows(t, st, "job_progress", 1)

	res, err := Jobs(ctxT(t), st, JobOptions{Options: Options{Window: Window{Since: at("09:00"), Until: at("13:00")},
		Now: at("12:30")}})
	if err != nil {
		t.Fatal(err)
	}
	want := "ft-e2e ml finished 2026-11-30T12:00:00Z deadline_met=met finished_at=2026-11-30T10:34:30Z gpu_hours=5.7 " +
		"usd=4.55 on_demand_usd=6.3 savings_usd=1.75 savings_pct=27.8 preemptions=1 lost_h=0.117 basis=arbiter"
	g := got(res, "deadline_met", "finished_at", "gpu_hours", "usd", "on_demand_usd", "savings_usd", "savings_pct",
		"preemptions", "lost_h", "basis")
	if strings.Join(g, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), want)
	}
}

// waitRows waits until table holds n rows.
func waitRows(t *testing.T, st Querier, table string, n int) {
	t.Helper()
	want := `{"n":` + strconv.Itoa(n) + `}`
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, err := st.Query(ctxT(t), "SELECT count() AS n FROM "+st.Table(table)+" FINAL")
		if err == nil && strings.TrimSpace(string(out)) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %s, want %d rows (err %v)", table, out, n, err)
		}
	}
}
