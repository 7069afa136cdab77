package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// TestQueryIsReadOnly checks that the engine itself refuses, in a query run through Query, what a
// SELECT must not do: read or write files or change tables. Reports only ever read. A query's own
// SETTINGS clause can lift readonly in chDB, which has no user profiles: that is why no SQL from
// outside reaches the engine (report requests over NATS name a report, never SQL).
func TestQueryIsReadOnly(t *testing.T) {
	s := storetest.New(t)
	out := filepath.Join(t.TempDir(), "x.txt")
	tests := []struct{ name, sql string }{
		{"file table function", "SELECT * FROM file('/etc/hostname', 'LineAsString')"},
		{"url table function", "SELECT * FROM url('http://127.0.0.1:1/', 'LineAsString')"},
		{"into outfile", "SELECT 'x' INTO OUTFILE '" + out + "'"},
		{"drop", "DROP TABLE " + s.Table("cost_hourly")},
		{"insert", "INSERT INTO " + s.Table("budget_alert") + " SELECT * FROM " + s.Table("budget_alert")},
		{"create", "CREATE TABLE " + s.Database() + ".evil (x UInt8) ENGINE = Memory"},
		{"outfile settings lifted", "SELECT 'x' INTO OUTFILE '" + out + "' SETTINGS readonly = 0, allow_ddl = 1"},
		{"two statements", "SELECT 1) ; SELECT * FROM file('/etc/hostname', 'LineAsString') --"},
		{"comment", "SELECT 1 /*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := s.Query(ctx(t), tt.sql); err == nil {
				t.Errorf("%s ran: %q", tt.sql, b)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("INTO OUTFILE wrote %s", out)
	}
	if b, err := s.Query(ctx(t), "SELECT count() AS n FROM "+s.Table("cost_hourly")); err != nil || !strings.Contains(string(b), `"n":0`) {
		t.Errorf("a plain SELECT: %q, %v", b, err)
	}
}
