package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/bursar-dev/bursar/schemas"
)

// ErrSchemaNewer is returned when the database was migrated by a newer Bursar than this one.
var ErrSchemaNewer = errors.New("ClickHouse schema is newer than this binary")

// Migration is one numbered file under schemas/clickhouse.
type Migration struct {
	Version  int
	Name     string
	Checksum string // sha256 of the template, before rendering
	source   string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Migrations lists the migrations this binary knows, in order.
func Migrations() ([]Migration, error) {
	return loadMigrations(schemas.ClickHouse, "clickhouse")
}

func loadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %s/%s: name must look like 0001_name.sql", dir, e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", e.Name(), err)
		}
		v, _ := strconv.Atoi(m[1])
		sum := sha256.Sum256(b)
		out = append(out, Migration{Version: v, Name: m[2], Checksum: hex.EncodeToString(sum[:]), source: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: versions must run 1, 2, 3... without gaps or repeats", m.Version, m.Name)
		}
	}
	return out, nil
}

// Statements renders the migration for a database and splits it into statements.
func (m Migration) Statements(db string, cfg Config) ([]string, error) {
	t, err := template.New(m.Name).Option("missingkey=error").Funcs(templateFuncs(cfg)).Parse(m.source)
	if err != nil {
		return nil, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
	}
	var b bytes.Buffer
	data := map[string]any{"DB": quote(db), "TelemetryTTLDays": cfg.TelemetryTTLDays}
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
	}
	return splitStatements(b.String()), nil
}

// templateFuncs lay a statement out for one server or for a cluster.
func templateFuncs(cfg Config) template.FuncMap {
	return template.FuncMap{
		"onCluster": func() string {
			if cfg.Cluster == "" {
				return ""
			}
			return "ON CLUSTER " + quote(cfg.Cluster)
		},
		// engine names a table engine with its parameters (ReplacingMergeTree's version column):
		// {{engine "ReplacingMergeTree" "at"}} is ReplacingMergeTree(at) on one server and
		// ReplicatedReplacingMergeTree('<path>', '{replica}', at) in a cluster.
		"engine": func(name string, params ...string) string {
			if cfg.Cluster == "" {
				if len(params) == 0 {
					return name
				}
				return name + "(" + strings.Join(params, ", ") + ")"
			}
			return "Replicated" + name + "(" + strings.Join(append([]string{
				"'/clickhouse/tables/{shard}/{database}/{table}'", "'{replica}'"}, params...), ", ") + ")"
		},
		// allShards reads a table on every shard, for a statement that must see all of it (a
		// backfill run on one server): the table itself on one server, cluster(...) in a cluster.
		"allShards": func(db, table string) string {
			if cfg.Cluster == "" {
				return db + "." + table
			}
			return "cluster('" + escapeString(cfg.Cluster) + "', " + db + "." + table + ")"
		},
		"dedupWindow": func() string {
			if cfg.Cluster == "" {
				return "non_replicated_deduplication_window = 10000"
			}
			return "replicated_deduplication_window = 10000"
		},
	}
}

// splitStatements splits SQL at lines ending in ';' and drops whole-line comments.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(sql, "\n") {
		t := strings.TrimSpace(line)
		if t == "" && cur.Len() == 0 || strings.HasPrefix(t, "--") {
			continue
		}
		if !strings.HasSuffix(t, ";") {
			cur.WriteString(line)
			continue
		}
		cur.WriteString(strings.TrimSuffix(strings.TrimRight(line, " \t\r\n"), ";"))
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// Migrate creates the database and applies the migrations it lacks, recording each in
// schema_migrations. Every statement is idempotent (IF NOT EXISTS), so a migration interrupted
// half-way is simply applied again. It refuses a database migrated by a newer binary.
func (s *Store) Migrate(ctx context.Context) error {
	known, err := Migrations()
	if err != nil {
		return err
	}
	on := templateFuncs(s.cfg)["onCluster"].(func() string)()
	if err := s.Exec(ctx, fmt.Sprintf("CREATE DATABASE IF NOT EXISTS %s %s", quote(s.db), on)); err != nil {
		return fmt.Errorf("creating database %s: %w", s.db, err)
	}
	engine := templateFuncs(s.cfg)["engine"].(func(string, ...string) string)("ReplacingMergeTree")
	if err := s.Exec(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s.schema_migrations %s (
		version UInt32, name String, checksum String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
	) ENGINE = %s ORDER BY version`, quote(s.db), on, engine)); err != nil {
		return fmt.Errorf("creating %s.schema_migrations: %w", s.db, err)
	}
	applied, err := s.applied(ctx)
	if err != nil {
		return err
	}
	if err := checkNotNewer(s.db, applied, known); err != nil {
		return err
	}
	for _, m := range known {
		if a, ok := applied[m.Version]; ok {
			if a.Checksum != m.Checksum {
				s.cfg.Log.Warn("an applied ClickHouse migration changed since; its changes are not applied again",
					"database", s.db, "migration", fmt.Sprintf("%04d_%s", m.Version, m.Name))
			}
			continue
		}
		if err := s.apply(ctx, m); err != nil {
			return err
		}
		s.cfg.Log.Info("applied ClickHouse migration", "database", s.db, "migration", fmt.Sprintf("%04d_%s", m.Version, m.Name))
	}
	return s.distribute(ctx)
}

// distribute creates, in a cluster, a Distributed table <name>_all over every MergeTree table,
// through which reads see all shards (docs/clickhouse.md). It is a no-op on a single server.
func (s *Store) distribute(ctx context.Context) error {
	if s.cfg.Cluster == "" {
		return nil
	}
	out, err := s.Query(ctx, fmt.Sprintf(`SELECT name FROM system.tables WHERE database = '%s'
		AND engine LIKE '%%MergeTree' AND name != 'schema_migrations'`, escapeString(s.db)))
	if err != nil {
		return fmt.Errorf("listing tables of %s: %w", s.db, err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var t struct{ Name string }
		if len(line) == 0 || json.Unmarshal(line, &t) != nil {
			continue
		}
		q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s ON CLUSTER %s AS %s.%s ENGINE = Distributed(%s, %s, %s)",
			quote(s.db), quote(t.Name+"_all"), quote(s.cfg.Cluster), quote(s.db), quote(t.Name),
			quote(s.cfg.Cluster), quote(s.db), quote(t.Name))
		if err := s.Exec(ctx, q); err != nil {
			return fmt.Errorf("creating %s.%s_all: %w", s.db, t.Name, err)
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, m Migration) error {
	stmts, err := m.Statements(s.db, s.cfg)
	if err != nil {
		return err
	}
	for i, st := range stmts {
		if err := s.Exec(ctx, st); err != nil {
			return fmt.Errorf("applying migration %04d_%s statement %d to %s: %w", m.Version, m.Name, i+1, s.db, err)
		}
	}
	rec := fmt.Sprintf("INSERT INTO %s.schema_migrations (version, name, checksum) VALUES (%d, '%s', '%s')",
		quote(s.db), m.Version, escapeString(m.Name), m.Checksum)
	if err := s.Exec(ctx, rec); err != nil {
		return fmt.Errorf("recording migration %04d_%s in %s: %w", m.Version, m.Name, s.db, err)
	}
	return nil
}

// Applied returns the migrations recorded in the database, by version.
func (s *Store) applied(ctx context.Context) (map[int]Migration, error) {
	out, err := s.Query(ctx, fmt.Sprintf("SELECT version, name, checksum FROM %s.schema_migrations FINAL ORDER BY version", quote(s.db)))
	if err != nil {
		return nil, fmt.Errorf("reading %s.schema_migrations: %w", s.db, err)
	}
	got := map[int]Migration{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r struct {
			Version  int    `json:"version"`
			Name     string `json:"name"`
			Checksum string `json:"checksum"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("reading %s.schema_migrations: %w", s.db, err)
		}
		got[r.Version] = Migration{Version: r.Version, Name: r.Name, Checksum: r.Checksum}
	}
	return got, nil
}

func checkNotNewer(db string, applied map[int]Migration, known []Migration) error {
	latest := 0
	if len(known) > 0 {
		latest = known[len(known)-1].Version
	}
	newest := Migration{}
	for v, m := range applied {
		if v > newest.Version {
			newest = m
		}
	}
	if newest.Version > latest {
		return fmt.Errorf("%w: database %s has migration %04d_%s, this binary knows up to %04d: "+
			"upgrade Bursar, or point it at another database", ErrSchemaNewer, db, newest.Version, newest.Name, latest)
	}
	return nil
}
