package store_test

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

const replicaCols = "id, at, version, workload, location, provider, market, offer, gpu_model, gpus_per_replica, " +
	"usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour"

// latestQuery reads each series' latest sample from replica_latest the way reports do.
const latestQuery = `SELECT workload, offer, argMax(ready, at) AS ready, argMax(usd_per_hour, at) AS usd,
	toString(max(at)) AS latest FROM %s GROUP BY workload, location, market, offer ORDER BY workload, offer`

// TestReplicaLatestFollowsTheNewestSample checks that replica_latest holds each series' newest
// replica.state whether it arrived through the view (in order, late, or repeated) or through the
// migration's backfill of history recorded before it, applied twice.
func TestReplicaLatestFollowsTheNewestSample(t *testing.T) {
	s := storetest.New(t)
	db := "`" + s.Database() + "`"
	insert := func(token, rows string) {
		t.Helper()
		if err := s.Insert(ctx(t), "replica_state", replicaCols, token, []byte(rows)); err != nil {
			t.Fatal(err)
		}
	}
	latest := func() string {
		t.Helper()
		out, err := s.Query(ctx(t), strings.Replace(latestQuery, "%s", db+".replica_latest", 1))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	const want = `{"workload":"chat","offer":"o1","ready":3,"usd":12,"latest":"2026-11-30 10:00:00.000"}
{"workload":"embed","offer":"o2","ready":0,"usd":4,"latest":"2026-11-30 09:30:00.000"}`

	// History recorded before the migration: drop the view and what it wrote, then backfill.
	for _, q := range []string{"DROP VIEW " + db + ".replica_latest_mv", "TRUNCATE TABLE " + db + ".replica_latest"} {
		if err := s.Exec(ctx(t), q); err != nil {
			t.Fatal(err)
		}
	}
	insert("before", "a\t2026-11-30 09:00:00\t1\tchat\tl1\taws\tspot\to1\tH100\t8\t10\t2\t2\t2026-11-30 09:00:00\t0\t0\n"+
		"b\t2026-11-30 09:30:00\t1\tembed\tl1\taws\tspot\to2\tL4\t1\t4\t0\t0\t2026-11-30 09:00:00\t1\t4\n"+
		"c\t2026-11-30 09:00:00\t1\tembed\tl1\taws\tspot\to2\tL4\t1\t4\t1\t1\t2026-11-30 09:00:00\t0\t0\n")
	for range 2 {
		applyMigration(t, s, "replica_latest")
	}
	// After it, through the view: a newer sample, a late older one and a repeat of the newest.
	insert("after-1", "d\t2026-11-30 10:00:00\t1\tchat\tl1\taws\tspot\to1\tH100\t8\t12\t3\t3\t2026-11-30 09:00:00\t2\t10\n")
	insert("after-2", "e\t2026-11-30 09:45:00\t1\tchat\tl1\taws\tspot\to1\tH100\t8\t11\t1\t1\t2026-11-30 10:00:00\t3\t12\n")
	insert("after-3", "d\t2026-11-30 10:00:00\t1\tchat\tl1\taws\tspot\to1\tH100\t8\t12\t3\t3\t2026-11-30 09:00:00\t2\t10\n")
	if got := latest(); got != want {
		t.Fatalf("latest samples:\n%s\nwant\n%s", got, want)
	}
	if err := s.Exec(ctx(t), "OPTIMIZE TABLE "+db+".replica_latest FINAL"); err != nil {
		t.Fatal(err)
	}
	if got := latest(); got != want {
		t.Fatalf("latest samples after merging:\n%s\nwant\n%s", got, want)
	}
}

// applyMigration runs one migration's statements again, as a migration interrupted half-way is.
func applyMigration(t *testing.T, s *store.Store, name string) {
	t.Helper()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name != name {
			continue
		}
		stmts, err := m.Statements(s.Database(), store.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range stmts {
			if err := s.Exec(ctx(t), st); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
		}
		return
	}
	t.Fatalf("no migration named %s", name)
}
