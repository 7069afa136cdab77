package recorder

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// held is a replica.state of llm at aws-use1 with its instances.
func held(hhmm string, ready int, instances ...string) events.Event {
	e := state(hhmm, "aws-use1", "aws/p5/spot", events.Spot, 8, ready, 10).(*events.ReplicaState)
	e.Instances = instances
	return e
}

// TestReplicaRowsKnowTheirIntervalsInstances: each replica_state row stores the sample's
// instances, and the instances of the interval it closes (the previous sample's) as
// prev_instances, also across a restart of the recorder, whose series are rebuilt from the store.
func TestReplicaRowsKnowTheirIntervalsInstances(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	publish(t, env, []events.Event{held("10:00", 1, "i-0a"), held("11:00", 2, "i-0a", `i-'b\c`)})
	stop := start(t, env, st, Config{})
	settled(t, env, "recorder")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	publish(t, env, []events.Event{held("12:00", 0)})
	start(t, env, st, Config{})
	settled(t, env, "recorder")

	want := []string{
		"10:00 [i-0a] prev []",            // the first sample closes an empty interval
		`11:00 [i-0a i-'b\c] prev [i-0a]`, // 10:00-11:00 ran on i-0a
		`12:00 [] prev [i-0a i-'b\c]`,     // after the restart: 11:00-12:00 ran on both
	}
	if got := instanceRows(t, st); !slices.Equal(got, want) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func instanceRows(t *testing.T, st *store.Store) []string {
	t.Helper()
	out, err := st.Query(testCtx(t), "SELECT formatDateTime(at, '%H:%i') AS at, instances, prev_instances FROM "+
		st.Table("replica_state")+" FINAL ORDER BY at")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			At            string   `json:"at"`
			Instances     []string `json:"instances"`
			PrevInstances []string `json:"prev_instances"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		rows = append(rows, r.At+" ["+strings.Join(r.Instances, " ")+"] prev ["+strings.Join(r.PrevInstances, " ")+"]")
	}
	return rows
}

// TestInstancesMigrationRunsTwice: migration 0006 is idempotent (a migration interrupted
// half-way is applied again), and in a cluster it drops the Distributed replica_state_all, which
// Migrate then makes again with the new columns.
func TestInstancesMigrationRunsTwice(t *testing.T) {
	st := storetest.New(t)
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m store.Migration) bool { return m.Name == "replica_instances" })
	if i < 0 {
		t.Fatal("no migration replica_instances")
	}
	stmts, err := ms[i].Statements(st.Database(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if err := st.Exec(testCtx(t), s); err != nil {
			t.Fatalf("applying again: %v\n%s", err, s)
		}
	}
	if strings.Contains(strings.Join(stmts, "\n"), "DROP") {
		t.Errorf("on one server the migration drops a table:\n%s", strings.Join(stmts, "\n"))
	}
	cluster, err := ms[i].Statements("bursar", store.Config{Cluster: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "DROP TABLE IF EXISTS `bursar`.replica_state_all ON CLUSTER `prod`"; !slices.Contains(cluster, want) {
		t.Errorf("cluster statements %q lack %q", cluster, want)
	}
}
