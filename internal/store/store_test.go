package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func count(t *testing.T, s *store.Store, query string) int {
	t.Helper()
	out, err := s.Query(ctx(t), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var n int
	if _, err := fmt.Sscanf(string(out), `{"n":%d}`, &n); err != nil {
		t.Fatalf("%s: reading %q: %v", query, out, err)
	}
	return n
}

func TestMigrateAppliesOnEmptyStoreAndAgainAsNoOp(t *testing.T) {
	s := storetest.Unmigrated(t)
	known, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx(t)); err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	db := "`" + s.Database() + "`"
	wantTables := []string{"price_observed", "capacity_reclaimed", "gpu_sample", "tokens_sample",
		"replica_state", "plan_decided", "action_updated", "budget_alert", "cost_hourly",
		"cost_hourly_mv", "tokens_hourly", "tokens_hourly_mv", "replica_latest", "replica_latest_mv",
		"job_progress", "job_state", "schema_migrations"}
	q := fmt.Sprintf("SELECT count() AS n FROM system.tables WHERE database = '%s' AND name IN ('%s')",
		s.Database(), strings.Join(wantTables, "','"))
	if got := count(t, s, q); got != len(wantTables) {
		t.Fatalf("tables after migrate = %d, want %d", got, len(wantTables))
	}
	if got := count(t, s, "SELECT count() AS n FROM "+db+".schema_migrations"); got != len(known) {
		t.Fatalf("schema_migrations rows = %d, want %d", got, len(known))
	}
	before, _ := s.Query(ctx(t), "SELECT version, applied_at FROM "+db+".schema_migrations ORDER BY version")

	if err := s.Migrate(ctx(t)); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	after, _ := s.Query(ctx(t), "SELECT version, applied_at FROM "+db+".schema_migrations ORDER BY version")
	if string(before) != string(after) {
		t.Fatalf("second migrate re-applied migrations:\nbefore %s\nafter  %s", before, after)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	s := storetest.New(t)
	db := "`" + s.Database() + "`"
	if err := s.Exec(ctx(t), "INSERT INTO "+db+".schema_migrations (version, name, checksum) VALUES (9999, 'from_the_future', '')"); err != nil {
		t.Fatal(err)
	}
	err := s.Migrate(ctx(t))
	if !errors.Is(err, store.ErrSchemaNewer) {
		t.Fatalf("Migrate = %v, want ErrSchemaNewer", err)
	}
	for _, want := range []string{s.Database(), "9999_from_the_future", "upgrade Bursar"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestInsertWithSameTokenIsStoredOnce(t *testing.T) {
	s := storetest.New(t)
	const cols = "id, at, version, workload, plan_id, actions, usd_per_hour_before, usd_per_hour_after, needs_approval"
	rows := []byte("p1\t1767323040.123\t1.0\tllm\tplan-1\t[('a1','launch','gcp','gcp/a3','spot',2,1,'it\\'s cheaper',false)]\t9.5\t8.25\tfalse\n" +
		"p2\t1767323041.000\t1.0\tllm\tplan-2\t[]\t1\t2\ttrue\n")
	tbl := s.Table("plan_decided")
	for i, tc := range []struct {
		name, token string
		want        int
	}{
		{"first insert", "batch-1", 2},
		{"same token again", "batch-1", 2},
		{"another token", "batch-2", 4},
	} {
		if err := s.Insert(ctx(t), "plan_decided", cols, tc.token, rows); err != nil {
			t.Fatalf("%d %s: %v", i, tc.name, err)
		}
		if got := count(t, s, "SELECT count() AS n FROM "+tbl); got != tc.want {
			t.Fatalf("%s: rows = %d, want %d", tc.name, got, tc.want)
		}
	}
	out, err := s.Query(ctx(t), "SELECT actions FROM "+tbl+" FINAL WHERE id = 'p1'")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"actions":[{"id":"a1","kind":"launch","location":"gcp","offer":"gcp/a3","market":"spot","replicas":2,"delta":1,"reason":"it's cheaper","needs_approval":false}]}`
	if strings.TrimSpace(string(out)) != want {
		t.Fatalf("actions = %s, want %s", out, want)
	}
}

func TestStatementErrorsCarryTheCode(t *testing.T) {
	s := storetest.New(t)
	tests := []struct {
		name      string
		query     string
		wantCode  int
		transient bool
	}{
		{name: "syntax", query: "SELEC 1", wantCode: 62},
		{name: "unknown table", query: "SELECT * FROM `" + s.Database() + "`.nope", wantCode: 60},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Query(ctx(t), tc.query)
			var ce *store.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *store.Error", err, err)
			}
			if ce.Code != tc.wantCode {
				t.Errorf("code = %d, want %d (%s)", ce.Code, tc.wantCode, ce.Message)
			}
			if got := store.Transient(err); got != tc.transient {
				t.Errorf("Transient = %v, want %v", got, tc.transient)
			}
		})
	}
}

// TestInsertOfRowsTheStoreCannotHoldIsRefused: what the real engine says for rows it cannot read
// (the time of issue 27, written as seconds that ClickHouse takes for a year) or that break a
// table's constraint is Refused, so the recorder can set those rows aside; the rest of an insert
// is stored without them.
func TestInsertOfRowsTheStoreCannotHoldIsRefused(t *testing.T) {
	s := storetest.New(t)
	const cols = "id, at, version, location, node, uuid, `index`, model, utilization_pct, memory_used_bytes, memory_total_bytes, power_w, temperature_c"
	// Recent: gpu_sample keeps raw rows for 30 days, and a merge may drop older ones at any time.
	now := fmt.Sprint(time.Now().Unix())
	good := "g1\t" + now + ".123\t1.0\tl\tn\tu\t0\tH100\t50\t1\t2\t300\t60\n"
	if err := s.Exec(ctx(t), "ALTER TABLE "+s.Table("gpu_sample")+" ADD CONSTRAINT no_poison CHECK node != 'poison'"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, row string
		wantCode  int
	}{
		{"a time ClickHouse reads as a year", "b1\t9999.999\t1.0\tl\tn\tu\t0\tH100\t50\t1\t2\t300\t60\n", 41},
		{"a constraint", "b2\t" + now + ".123\t1.0\tl\tpoison\tu\t0\tH100\t50\t1\t2\t300\t60\n", 469},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Insert(ctx(t), "gpu_sample", cols, fmt.Sprint("refused-", i), []byte(good+tc.row))
			var ce *store.Error
			if !errors.As(err, &ce) || ce.Code != tc.wantCode || !store.Refused(err) || store.Transient(err) {
				t.Fatalf("Insert = %v, want a refusal with code %d", err, tc.wantCode)
			}
		})
	}
	if err := s.Insert(ctx(t), "gpu_sample", cols, "good", []byte(good)); err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, "SELECT count() AS n FROM "+s.Table("gpu_sample")); got != 1 {
		t.Errorf("rows = %d, want the good one alone", got)
	}
}
