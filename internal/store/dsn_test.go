package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/bursar-dev/bursar/internal/store/chdb"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		name        string
		dsn         string
		wantDB      string
		wantCluster string
		wantAddr    []string
		wantUser    string
		wantHTTP    bool
		wantTLS     TLSFiles
		wantErr     string
	}{
		{name: "full", dsn: "clickhouse://bursar@ch1:9000/history", wantDB: "history",
			wantAddr: []string{"ch1:9000"}, wantUser: "bursar"},
		{name: "password in the DSN", dsn: "clickhouse://bursar:pw@ch1:9000/history", wantErr: "BURSAR_CLICKHOUSE_PASSWORD_FILE"},
		{name: "tls files", dsn: "clickhouse://ch1:9440/b?secure=true&tls_ca=/ca.pem&tls_cert=/c.pem&tls_key=/k.pem",
			wantDB: "b", wantAddr: []string{"ch1:9440"}, wantTLS: TLSFiles{CA: "/ca.pem", Cert: "/c.pem", Key: "/k.pem"}},
		{name: "default database", dsn: "clickhouse://ch1:9000", wantDB: "bursar", wantAddr: []string{"ch1:9000"}},
		{name: "several hosts and a cluster", dsn: "tcp://u@a:9000,b:9000/x?cluster=prod&dial_timeout=2s",
			wantDB: "x", wantCluster: "prod", wantAddr: []string{"a:9000", "b:9000"}, wantUser: "u"},
		{name: "http", dsn: "http://ch:8123/bursar", wantDB: "bursar", wantAddr: []string{"ch:8123"}, wantHTTP: true},
		{name: "bad scheme", dsn: "postgres://u:pw@h:5432/db", wantErr: `scheme "postgres"`},
		{name: "no host", dsn: "clickhouse:///bursar", wantErr: "no host"},
		{name: "no port", dsn: "clickhouse://u@ch1/bursar", wantErr: "has no port"},
		{name: "bad port", dsn: "clickhouse://ch1:99999/bursar", wantErr: "port must be 1-65535"},
		{name: "bad database", dsn: "clickhouse://ch1:9000/my-db", wantErr: `database "my-db"`},
		{name: "bad cluster", dsn: "clickhouse://ch1:9000/b?cluster=a;drop", wantErr: "cluster"},
		{name: "bad option", dsn: "clickhouse://u@ch1:9000/b?dial_timeout=soon", wantErr: "dial timeout"},
		{name: "not a url", dsn: "clickhouse://u:pw@[::1/b", wantErr: "not a URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDSN(tc.dsn)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseDSN(%q) = %v, want an error containing %q", tc.dsn, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDSN(%q): %v", tc.dsn, err)
			}
			if got.Database != tc.wantDB || got.Cluster != tc.wantCluster {
				t.Errorf("database, cluster = %q, %q; want %q, %q", got.Database, got.Cluster, tc.wantDB, tc.wantCluster)
			}
			if fmt.Sprint(got.Options.Addr) != fmt.Sprint(tc.wantAddr) || got.Options.Auth.Username != tc.wantUser {
				t.Errorf("addr, user = %v, %q; want %v, %q", got.Options.Addr, got.Options.Auth.Username, tc.wantAddr, tc.wantUser)
			}
			if (got.Options.Protocol == clickhouse.HTTP) != tc.wantHTTP {
				t.Errorf("protocol = %v, want HTTP %v", got.Options.Protocol, tc.wantHTTP)
			}
			for _, k := range []string{"cluster", "tls_ca", "tls_cert", "tls_key"} {
				if _, ok := got.Options.Settings[k]; ok {
					t.Errorf("%s was passed on as a ClickHouse setting", k)
				}
			}
			if f := got.TLS; f.CA != tc.wantTLS.CA || f.Cert != tc.wantTLS.Cert || f.Key != tc.wantTLS.Key {
				t.Errorf("TLS files = %+v, want %+v", f, tc.wantTLS)
			}
			if strings.Contains(got.Redacted, "s3cret") {
				t.Errorf("Redacted %q shows the password", got.Redacted)
			}
		})
	}
}

func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{"clickhouse://u:pw@h:9000/db", "tcp://a:1,b:2/x?cluster=c", "http://h:8123",
		"clickhouse://u:pw@h:9000/db?dial_timeout=x", "clickhouse://%zz",
		"clickhouse://h:9440/b?secure=true&tls_ca=/a.pem&tls_cert=/c.pem&tls_key=/k.pem&tls_ca=/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		sc, err := ParseDSN(dsn)
		if err != nil {
			return
		}
		if !identRE.MatchString(sc.Database) {
			t.Fatalf("accepted database %q", sc.Database)
		}
		if sc.Cluster != "" && !identRE.MatchString(sc.Cluster) {
			t.Fatalf("accepted cluster %q", sc.Cluster)
		}
		if p := sc.Options.Auth.Password; p != "" {
			t.Fatalf("accepted a DSN with a password (%q)", sc.Redacted)
		}
		for _, k := range []string{"cluster", "tls_ca", "tls_cert", "tls_key"} {
			if _, ok := sc.Options.Settings[k]; ok {
				t.Fatalf("%s passed on as a ClickHouse setting", k)
			}
		}
	})
}

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"unavailable", errors.Join(ErrUnavailable, io.EOF), true},
		{"deadline", fmt.Errorf("inserting: %w", context.DeadlineExceeded), true},
		{"too many parts", &Error{Code: 252}, true},
		{"memory limit", &Error{Code: 241}, true},
		{"syntax error", &Error{Code: 62}, false},
		{"unknown table", &Error{Code: 60}, false},
		{"canceled", context.Canceled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Transient(tc.err); got != tc.want {
				t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestEngineErrorsAreClassified(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantDown bool
	}{
		{"embedded", &chdb.QueryError{Message: "Code: 252. DB::Exception: Too many parts"}, 252, false},
		{"server", &clickhouse.Exception{Code: 60, Message: "Table x doesn't exist"}, 60, false},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, 0, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := wrapEngineError(tc.err)
			var ce *Error
			if errors.As(err, &ce) != (tc.wantCode != 0) || (ce != nil && ce.Code != tc.wantCode) {
				t.Errorf("wrap(%v) = %v, want code %d", tc.err, err, tc.wantCode)
			}
			if errors.Is(err, ErrUnavailable) != tc.wantDown {
				t.Errorf("wrap(%v) unavailable = %v, want %v", tc.err, errors.Is(err, ErrUnavailable), tc.wantDown)
			}
		})
	}
}

// A server that is not there: the error says which (without the password) and is transient.
func TestOpenServerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	t.Setenv(PasswordEnv, "hunter2")
	sc, err := ParseDSN("clickhouse://bursar@" + addr + "/bursar?dial_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = OpenServer(ctx, sc)
	if err == nil {
		t.Fatal("OpenServer to a closed port succeeded")
	}
	if !Transient(err) {
		t.Errorf("error %v is not transient", err)
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q must name %s and not the password", err, addr)
	}
}

func TestMigrationsRenderForACluster(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cluster  string
		want     []string
		wantNone []string
	}{
		{"single server", "", []string{"ENGINE = ReplacingMergeTree", "non_replicated_deduplication_window",
			"ENGINE = ReplacingMergeTree(at)", "FROM `bursar`.replica_state\nGROUP BY"}, []string{"ON CLUSTER", "Replicated", "cluster("}},
		{"cluster", "prod", []string{"ON CLUSTER `prod`", "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')",
			"ReplicatedSummingMergeTree", "replicated_deduplication_window",
			"ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', at)",
			"FROM cluster('prod', `bursar`.replica_state)"}, []string{"non_replicated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var all strings.Builder
			for _, m := range ms {
				stmts, err := m.Statements("bursar", Config{Cluster: tc.cluster, TelemetryTTLDays: 7})
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range stmts {
					all.WriteString(s + "\n")
				}
			}
			sql := all.String()
			for _, w := range append(tc.want, "toIntervalDay(7)") {
				if !strings.Contains(sql, w) {
					t.Errorf("rendered SQL lacks %q", w)
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(sql, w) {
					t.Errorf("rendered SQL has %q", w)
				}
			}
		})
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- header\n\nCREATE TABLE a (x String); \n-- only a comment;\nSELECT 'a;b'\nFROM t;\n")
	want := []string{"CREATE TABLE a (x String)", "SELECT 'a;b'\nFROM t"}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("splitStatements = %q, want %q", got, want)
	}
}

// TestRefused: only a refusal of the rows themselves is Refused; a store that is down, slow, read
// only or failing without a code, and a statement that fails whatever its rows, are not.
func TestRefused(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"datetime", fmt.Errorf("inserting into bursar.gpu_sample: %w", &Error{Code: 41, Message: "Cannot read DateTime"}), true},
		{"parse", &Error{Code: 27}, true},
		{"constraint", &Error{Code: 469}, true},
		{"unavailable", errors.Join(ErrUnavailable, io.EOF), false},
		{"deadline", context.DeadlineExceeded, false},
		{"too many parts", &Error{Code: 252}, false},
		{"read only", &Error{Code: 242}, false},
		{"no code", &Error{Message: "std::exception"}, false},
		{"a plain error", errors.New("soak: the history store refuses writes"), false},
		{"syntax error", &Error{Code: 62}, false},
		{"unknown table", &Error{Code: 60}, false},
		{"unknown column", &Error{Code: 16}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Refused(tc.err); got != tc.want {
				t.Errorf("Refused(%v) = %v, want %v", tc.err, got, tc.want)
			}
			if Refused(tc.err) && Transient(tc.err) {
				t.Errorf("%v is both refused and transient", tc.err)
			}
		})
	}
}
