// Package store is Bursar's history in ClickHouse: the versioned schema and one small interface
// over the two engines that run it, the embedded engine (chDB, package store/chdb) and a
// ClickHouse server or cluster (clickhouse-go/v2). Both run the same SQL; rows go in as
// TabSeparated text with an insert_deduplication_token, results come back as JSONEachRow.
//
// # Who opens the store
//
// With a server (a --clickhouse DSN), every program opens it directly. The embedded store lives
// under --data-dir and belongs to one process at a time, normally `arbiter run`, which also runs
// the recorder. Open takes an exclusive flock on <data-dir>/clickhouse.lock and writes its owner
// (program, pid, host, start time) into it; the kernel drops the lock when the process exits, so a
// crash never leaves a stale owner. A second process that opens the same directory gets a
// *chdb.OwnedError naming the owner instead of a second engine writing the same files: `report`
// then asks the owner over NATS (request/reply) and only opens the files itself when no owner
// runs. libchdb also allows one engine per process, with its data path fixed by the first open, so
// within a process code shares one engine and tests isolate by database name, not by path.
package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/bursar-dev/bursar/internal/store/chdb"
)

// Engine runs SQL on one ClickHouse. It is the seam between the store and its two engines.
type Engine interface {
	// Exec runs one statement. data, when not nil, is the inline data of an INSERT ... FORMAT.
	Exec(ctx context.Context, query string, data []byte) error
	// Query runs one SELECT and returns its rows as JSONEachRow: one JSON object per line.
	Query(ctx context.Context, query string) ([]byte, error)
	// Close releases the engine.
	Close() error
}

// DefaultDatabase is the database Bursar uses when the DSN names none.
const DefaultDatabase = "bursar"

// DefaultTelemetryTTLDays is how long raw GPU and token samples are kept.
const DefaultTelemetryTTLDays = 30

// Config says which ClickHouse to open and how to lay out the schema.
type Config struct {
	// DSN selects a ClickHouse server (clickhouse://user@host:9000/bursar). Empty selects the
	// embedded engine under DataDir.
	DSN     string
	DataDir string
	// Owner describes this process in the embedded store's lock file, e.g. "arbiter run".
	Owner string
	// Database overrides the DSN's database (tests use one per test).
	Database string
	// TelemetryTTLDays is how long raw telemetry is kept; 0 means DefaultTelemetryTTLDays. It
	// applies when the tables are created; change it later with ALTER TABLE ... MODIFY TTL.
	TelemetryTTLDays int
	// Cluster, when set, creates Replicated tables ON CLUSTER (see docs/clickhouse.md). The DSN's
	// cluster parameter sets it too.
	Cluster string
	// ReadOnly opens an existing store as it is, for readers (report): nothing is created or
	// migrated, and a store that does not exist is ErrNoHistory.
	ReadOnly bool
	Log      *slog.Logger
}

// ErrNoHistory means a reader found no Bursar history where it looked: the process that records
// it (arbiter run, arbiter record) has not run there yet.
var ErrNoHistory = errors.New("no Bursar history")

// Store is one Bursar database on one engine.
type Store struct {
	eng      Engine
	db       string
	cfg      Config
	ownsEng  bool
	embedded bool
}

// Open opens the engine cfg selects and brings the schema up to date. With no DSN it starts the
// embedded engine, which needs libchdb.so (make setup) and ownership of cfg.DataDir.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	var (
		eng Engine
		db  string
		err error
	)
	if cfg.DSN != "" {
		var sc ServerConfig
		if sc, err = ParseDSN(cfg.DSN); err != nil {
			return nil, err
		}
		db = sc.Database
		if cfg.Cluster == "" {
			cfg.Cluster = sc.Cluster
		}
		if eng, err = OpenServer(ctx, sc); err != nil {
			return nil, err
		}
	} else {
		if cfg.DataDir == "" {
			return nil, errors.New("opening the embedded ClickHouse: no --data-dir given (or pass --clickhouse to use a server)")
		}
		if dir := filepath.Join(cfg.DataDir, "clickhouse"); cfg.ReadOnly {
			if _, err := os.Stat(dir); err != nil {
				return nil, fmt.Errorf("%w under %s (%s does not exist): start \"arbiter run\" (or \"arbiter record\") "+
					"with this --data-dir first, or pass --clickhouse for a server", ErrNoHistory, cfg.DataDir, dir)
			}
		}
		if eng, err = OpenEmbedded(ctx, cfg.DataDir, cfg.Owner); err != nil {
			return nil, err
		}
	}
	if cfg.Database != "" {
		db = cfg.Database
	}
	s := New(eng, db, cfg)
	s.ownsEng, s.embedded = true, cfg.DSN == ""
	if cfg.ReadOnly {
		if err := s.checkExists(ctx); err != nil {
			eng.Close()
			return nil, err
		}
		return s, nil
	}
	if err := s.Migrate(ctx); err != nil {
		eng.Close()
		return nil, err
	}
	return s, nil
}

// checkExists fails with ErrNoHistory when the database holds no migrated Bursar schema.
func (s *Store) checkExists(ctx context.Context) error {
	out, err := s.Query(ctx, fmt.Sprintf("SELECT count() AS n FROM system.tables WHERE database = '%s' AND name = 'schema_migrations'",
		escapeString(s.db)))
	if err != nil {
		return fmt.Errorf("looking for Bursar's tables in %s: %w", s.db, err)
	}
	var r struct{ N int }
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil || r.N == 0 {
		return fmt.Errorf("%w in database %s: start \"arbiter run\" (or \"arbiter record\") against this ClickHouse first", ErrNoHistory, s.db)
	}
	return nil
}

// New returns a store over an engine that is already open, for database db (DefaultDatabase when
// empty). It does not migrate, and Close leaves the engine open.
func New(eng Engine, db string, cfg Config) *Store {
	if db == "" {
		db = DefaultDatabase
	}
	if cfg.TelemetryTTLDays <= 0 {
		cfg.TelemetryTTLDays = DefaultTelemetryTTLDays
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Store{eng: eng, db: db, cfg: cfg}
}

// Engine is the engine the store runs on.
func (s *Store) Engine() Engine { return s.eng }

// Database is the store's database name.
func (s *Store) Database() string { return s.db }

// Table returns the quoted name of a table for queries. In a cluster, reads go through the
// Distributed table <name>_all (see docs/clickhouse.md).
func (s *Store) Table(name string) string {
	if s.cfg.Cluster != "" {
		name += "_all"
	}
	return quote(s.db) + "." + quote(name)
}

// Insert appends rows, given as TabSeparated text in the order of columns, to a table. token makes
// the insert idempotent: the same token within the table's deduplication window is stored once.
func (s *Store) Insert(ctx context.Context, table, columns, token string, rows []byte) error {
	if len(rows) == 0 {
		return nil
	}
	q := fmt.Sprintf("INSERT INTO %s.%s (%s) SETTINGS insert_deduplicate = 1, insert_deduplication_token = '%s', input_format_parallel_parsing = 0 FORMAT TabSeparated",
		quote(s.db), quote(table), columns, escapeString(token))
	if err := s.eng.Exec(ctx, q, rows); err != nil {
		return fmt.Errorf("inserting into %s.%s: %w", s.db, table, err)
	}
	return nil
}

// Exec runs one statement.
func (s *Store) Exec(ctx context.Context, query string) error { return s.eng.Exec(ctx, query, nil) }

// Query runs a SELECT and returns its rows as JSONEachRow lines.
func (s *Store) Query(ctx context.Context, query string) ([]byte, error) {
	return s.eng.Query(ctx, query)
}

// Close closes the engine when the store opened it.
func (s *Store) Close() error {
	if !s.ownsEng {
		return nil
	}
	return s.eng.Close()
}

// OpenEmbedded starts the process's embedded engine under dataDir for owner.
func OpenEmbedded(ctx context.Context, dataDir, owner string) (Engine, error) {
	e, err := chdb.Open(dataDir, owner)
	if err != nil {
		return nil, err
	}
	emb := &embedded{e: e}
	// Query settings for the session: the same output on both engines, and no profiler signals.
	for _, set := range []string{
		"SET output_format_json_quote_64bit_integers = 0",
		"SET output_format_json_escape_forward_slashes = 0",
		"SET query_profiler_real_time_period_ns = 0",
		"SET query_profiler_cpu_time_period_ns = 0",
	} {
		if err := emb.Exec(ctx, set, nil); err != nil {
			e.Close()
			return nil, fmt.Errorf("configuring embedded ClickHouse: %w", err)
		}
	}
	return emb, nil
}

// embedded adapts the chDB engine to Engine.
type embedded struct{ e *chdb.Engine }

func (m *embedded) Exec(ctx context.Context, query string, data []byte) error {
	q := make([]byte, 0, len(query)+1+len(data))
	q = append(q, query...)
	if data != nil {
		q = append(q, '\n')
		q = append(q, data...)
	}
	_, err := m.e.Query(ctx, q, "")
	return wrapEngineError(err)
}

// readOnlySettings are the engine's own guards on every Query: readonly=1 refuses writes and DDL,
// allow_ddl=0 refuses table functions (file, url, s3...), and a wrapped INTO OUTFILE is a syntax
// error. They are a second guard: on chDB, which has no user profiles, the wrapped query's own
// SETTINGS clause can lift them, so only Bursar's own SQL may reach Query (report requests over
// NATS carry none); a ClickHouse server enforces them for other clients by a user's profile.
const readOnlySettings = "SETTINGS allow_ddl = 0, readonly = 1"

// Query runs query as a subquery of a read-only SELECT, so the engine, not a check of the text,
// refuses writes and table functions. The outer SELECT formats the rows: output settings in the
// query's own SETTINGS (date_time_output_format...) do not reach the output.
func (m *embedded) Query(ctx context.Context, query string) ([]byte, error) {
	q := "SELECT * FROM (\n" + query + "\n) " + readOnlySettings
	out, err := m.e.Query(ctx, []byte(q), "JSONEachRow")
	return out, wrapEngineError(err)
}

func (m *embedded) Close() error { return m.e.Close() }

// quote quotes an identifier with backticks.
func quote(id string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(id, `\`, `\\`), "`", "\\`") + "`"
}

// escapeString escapes s for a single-quoted SQL string literal.
func escapeString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}
