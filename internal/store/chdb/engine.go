// Package chdb runs ClickHouse inside the process through libchdb, the embedded engine that is
// Bursar's default store when no ClickHouse server is configured.
//
// The library is bound with purego when the first Engine opens, not at init as chdb-go does
// (chdb-go v1.11.0 dlopens libchdb in an init() that panics when the file is missing), so any
// binary may link this package and still run against a server without libchdb.so present.
//
// Two facts about libchdb shape the API. It is one engine per process, and its data path is
// fixed by the first open: a later open with another path would silently reuse the first. So
// Open refuses a second path in the same process, and callers isolate data by database name.
// And the data directory belongs to one process at a time: Open takes an exclusive lock file
// beside the data naming its owner, and a second process gets an *OwnedError naming that owner.
package chdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/bursar-dev/bursar/internal/lockfile"
)

// ErrClosed is returned by calls on a closed engine.
var ErrClosed = errors.New("embedded ClickHouse engine is closed")

// Engine is the process's embedded ClickHouse. Its methods are safe for concurrent use;
// libchdb runs one query at a time.
type Engine struct {
	api  *api
	conn *unsafe.Pointer
	dir  string
	lock *lockfile.Lock

	mu     sync.RWMutex // held for reading by queries, for writing by Close
	closed bool
}

var (
	procMu   sync.Mutex
	procPath string  // the data path libchdb was first opened with, fixed for the process
	procOpen *Engine // the engine open now, if any
)

// Open starts the embedded engine with its data under dataDir/clickhouse and takes ownership of
// dataDir's store for owner (a short description such as "arbiter run"). It fails with
// ErrLibraryMissing when libchdb.so is absent, with *OwnedError when another process owns the
// store, and when this process already opened an engine.
func Open(dataDir, owner string) (*Engine, error) {
	dir, err := filepath.Abs(filepath.Join(dataDir, "clickhouse"))
	if err != nil {
		return nil, fmt.Errorf("resolving embedded ClickHouse data dir under %q: %w", dataDir, err)
	}
	procMu.Lock()
	defer procMu.Unlock()
	if procOpen != nil {
		return nil, fmt.Errorf("opening embedded ClickHouse at %s: this process already has it open at %s "+
			"(libchdb allows one engine per process; share the open engine)", dir, procOpen.dir)
	}
	if procPath != "" && procPath != dir {
		return nil, fmt.Errorf("opening embedded ClickHouse at %s: this process used %s before, and libchdb "+
			"keeps the first data path for the life of the process", dir, procPath)
	}
	a, err := load()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating embedded ClickHouse data dir: %w", err)
	}
	lock, err := acquire(dir+".lock", owner)
	if err != nil {
		return nil, err
	}
	conn, err := connect(a, dir)
	if err != nil {
		lock.Release()
		return nil, err
	}
	e := &Engine{api: a, conn: conn, dir: dir, lock: lock}
	procPath, procOpen = dir, e
	return e, nil
}

func connect(a *api, dir string) (*unsafe.Pointer, error) {
	args := []string{"clickhouse", "--path=" + dir}
	argv := make([]*byte, len(args))
	for i, s := range args {
		b := append([]byte(s), 0)
		argv[i] = &b[0]
	}
	var conn *unsafe.Pointer
	keepGoSignals(func() {
		a.signalHandlers(0)
		conn = a.connect(int(len(argv)), &argv[0])
	})
	if conn == nil || *conn == nil {
		return nil, fmt.Errorf("starting embedded ClickHouse at %s failed: check the directory is writable "+
			"and holds a store written by ClickHouse %s or older", dir, Version)
	}
	return conn, nil
}

// Dir is the engine's data directory.
func (e *Engine) Dir() string { return e.dir }

// Query runs one statement and returns its output in format (for example "JSONEachRow"; empty
// for statements without output). libchdb cannot interrupt a running query: when ctx ends first,
// Query returns ctx.Err() and the statement finishes in the background.
func (e *Engine) Query(ctx context.Context, query []byte, format string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := e.run(query, format)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run calls libchdb and copies the result out of C memory.
func (e *Engine) run(query []byte, format string) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	if len(query) == 0 {
		return nil, errors.New("empty query")
	}
	if format == "" {
		format = "TabSeparated"
	}
	f := []byte(format)
	res := e.api.queryN(*e.conn, &query[0], uintptr(len(query)), &f[0], uintptr(len(f)))
	if res == nil {
		return nil, errors.New("embedded ClickHouse returned no result")
	}
	defer e.api.destroyResult(res)
	if msg := e.api.resultError(res); msg != "" {
		return nil, &QueryError{Message: msg}
	}
	n := e.api.resultLength(res)
	buf := e.api.resultBuffer(res)
	if n == 0 || buf == nil {
		return nil, nil
	}
	return append([]byte(nil), unsafe.Slice(buf, n)...), nil
}

// Close stops the engine after running queries finish and releases the data directory. The
// process may open the same directory again, never another one.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.api.closeConn(e.conn)
	procMu.Lock()
	procOpen = nil
	procMu.Unlock()
	return e.lock.Release()
}

// QueryError is an error ClickHouse reported for a statement, with its message as the engine
// wrote it (including the "Code: N" prefix).
type QueryError struct{ Message string }

func (e *QueryError) Error() string { return "embedded ClickHouse: " + e.Message }
