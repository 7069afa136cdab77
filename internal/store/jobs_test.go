package store_test

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/store/storetest"
)

const jobStateCols = "id, at, version, job, team, state, work_s, work_done_s, deadline, overhead_s, location, " +
	"market, gpus_per_replica, usd_per_hour, on_demand_usd_per_hour, usd_spent, preemptions, lost_s, finished_at, reason"

// TestJobStateHoldsEachEventOnceWithOptionalTimes checks the job_state table of migration 0005:
// a finish time is NULL until the job finishes and reads back as written when it does, and a
// redelivered event (the same id, in another insert) is one row.
func TestJobStateHoldsEachEventOnceWithOptionalTimes(t *testing.T) {
	s := storetest.New(t)
	running := "a\t2026-11-30 09:00:00\t1.0\tft\tresearch\trunning\t172800\t0\t2026-12-02 13:00:00\t180\taws-use1\tspot\t8\t7.78\t24.48\t0\t0\t0\t\\N\t\n"
	finished := "b\t2026-12-02 10:00:00\t1.0\tft\tresearch\tfinished\t172800\t172800\t2026-12-02 13:00:00\t180\taws-use1\ton_demand\t8\t24.48\t24.48\t612.5\t2\t540\t2026-12-02 09:59:30.250\tdone\n"
	for i, rows := range []string{running + finished, running} {
		if err := s.Insert(ctx(t), "job_state", jobStateCols, []string{"first", "again"}[i], []byte(rows)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := s.Query(ctx(t), "SELECT id, state, toString(finished_at) AS finished, isNull(finished_at) AS open, usd_spent FROM "+
		s.Table("job_state")+" FINAL ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"a","state":"running","finished":null,"open":1,"usd_spent":0}
{"id":"b","state":"finished","finished":"2026-12-02 09:59:30.250","open":0,"usd_spent":612.5}`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("job_state:\n%s\nwant\n%s", got, want)
	}
}
