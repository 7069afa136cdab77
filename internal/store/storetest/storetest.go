// Package storetest gives tests a real ClickHouse: the embedded engine (libchdb, installed by
// make setup), or the server named by BURSAR_TEST_CLICKHOUSE. libchdb runs one engine per process
// with a data path fixed by the first open, so a test binary opens it once, in TestMain through
// Main, and every test gets its own database.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/chdb"
)

// ServerEnv names the variable that points the tests at a ClickHouse server instead of the
// embedded engine, e.g. clickhouse://default@127.0.0.1:9000/bursar_test.
const ServerEnv = "BURSAR_TEST_CLICKHOUSE"

var (
	engine  store.Engine
	openErr error
	cluster string
)

// Main opens the engine for the test binary, runs the tests and closes it. Call it from
// TestMain. When the engine cannot open, the tests that need it fail with the reason.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if dsn := os.Getenv(ServerEnv); dsn != "" {
		sc, err := store.ParseDSN(dsn)
		if err == nil {
			cluster = sc.Cluster
			engine, err = store.OpenServer(ctx, sc)
		}
		openErr = err
	} else {
		dir, err := os.MkdirTemp("", "bursar-chdb-*")
		if err != nil {
			openErr = err
			return m.Run()
		}
		defer os.RemoveAll(dir)
		engine, openErr = store.OpenEmbedded(ctx, dir, "go test "+os.Args[0])
	}
	if openErr == nil {
		defer engine.Close()
	}
	return m.Run()
}

// Engine returns the test binary's engine, failing the test when it could not open.
func Engine(tb testing.TB) store.Engine {
	tb.Helper()
	if openErr != nil {
		tb.Fatalf("no ClickHouse for this test: %v\n(the embedded engine needs libchdb.so %s: run %s; "+
			"or set %s to a server DSN)", openErr, chdb.Version, chdb.SetupCommand, ServerEnv)
	}
	if engine == nil {
		tb.Fatal("storetest: call storetest.Main(m) from TestMain")
	}
	return engine
}

// New returns a store in a fresh database, migrated, dropped when the test ends.
func New(tb testing.TB) *store.Store {
	tb.Helper()
	s := Unmigrated(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		tb.Fatalf("migrating %s: %v", s.Database(), err)
	}
	return s
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// Unmigrated returns a store over a database name nobody used yet, not created.
func Unmigrated(tb testing.TB) *store.Store {
	tb.Helper()
	eng := Engine(tb)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := nonIdent.ReplaceAllString(strings.ToLower(tb.Name()), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	db := fmt.Sprintf("t_%s_%s", name, hex.EncodeToString(b[:]))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		on := ""
		if cluster != "" {
			on = " ON CLUSTER `" + cluster + "`"
		}
		_ = eng.Exec(ctx, "DROP DATABASE IF EXISTS `"+db+"`"+on, nil) // not SYNC: it never returns on libchdb
	})
	return store.New(eng, db, store.Config{Cluster: cluster})
}

// embeddedDir is the one directory of a test process whose code under test opens the embedded
// engine itself (the demo, the system builder): libchdb keeps the first data path it opens for
// the life of the process, so every run (go test -count) must give the same.
var embeddedDir struct {
	once sync.Once
	dir  string
	err  error
}

// EmbeddedDir returns that directory, made on first use; give each run a database of its own.
// Call RemoveEmbeddedDir from TestMain after the tests.
func EmbeddedDir(tb testing.TB) string {
	tb.Helper()
	embeddedDir.once.Do(func() { embeddedDir.dir, embeddedDir.err = os.MkdirTemp("", "bursar-embedded-") })
	if embeddedDir.err != nil {
		tb.Fatal(embeddedDir.err)
	}
	return embeddedDir.dir
}

// RemoveEmbeddedDir removes the directory EmbeddedDir made, if it made one.
func RemoveEmbeddedDir() {
	if embeddedDir.dir != "" {
		os.RemoveAll(embeddedDir.dir)
	}
}
