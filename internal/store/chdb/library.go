package chdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/bursar-dev/bursar/internal/cachedir"
	"github.com/ebitengine/purego"
)

// Version is the libchdb release this code binds, the one scripts/setup-chdb.sh installs.
const Version = "26.5.3"

// SetupCommand is what a person runs to install the library.
const SetupCommand = "make setup (or scripts/setup-chdb.sh)"

// ErrLibraryMissing is returned when libchdb.so cannot be found or loaded.
var ErrLibraryMissing = errors.New("embedded ClickHouse library libchdb.so not available")

// LibraryPath says where libchdb.so is expected: $BURSAR_CHDB_LIB when set, else the cache that
// scripts/setup-chdb.sh fills, ${BURSAR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bursar}/chdb/<Version>/.
// It does not check that the file exists.
func LibraryPath() string {
	if p := os.Getenv("BURSAR_CHDB_LIB"); p != "" {
		return p
	}
	return filepath.Join(cachedir.Root(), "chdb", Version, "libchdb.so")
}

// api is the part of the chDB C ABI this package calls. The functions are bound when the first
// engine opens, never at init: a binary pointed at a ClickHouse server runs without the library.
type api struct {
	connect        func(argc int, argv **byte) *unsafe.Pointer
	closeConn      func(conn *unsafe.Pointer)
	queryN         func(conn unsafe.Pointer, query *byte, queryLen uintptr, format *byte, formatLen uintptr) unsafe.Pointer
	destroyResult  func(res unsafe.Pointer)
	resultBuffer   func(res unsafe.Pointer) *byte
	resultLength   func(res unsafe.Pointer) uintptr
	resultError    func(res unsafe.Pointer) string
	resultWritten  func(res unsafe.Pointer) uint64
	signalHandlers func(enabled int32)
}

var (
	loadOnce sync.Once
	loaded   *api
	loadErr  error
)

// load binds libchdb once per process.
func load() (*api, error) {
	loadOnce.Do(func() { loaded, loadErr = bind(LibraryPath()) })
	return loaded, loadErr
}

func bind(path string) (*api, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %s is missing: run %s, or set BURSAR_CHDB_LIB to a libchdb.so %s",
			ErrLibraryMissing, path, SetupCommand, Version)
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: loading %s: %v: run %s to reinstall it", ErrLibraryMissing, path, err, SetupCommand)
	}
	a := &api{}
	syms := []struct {
		name string
		fn   any
	}{
		{"chdb_connect", &a.connect},
		{"chdb_close_conn", &a.closeConn},
		{"chdb_query_n", &a.queryN},
		{"chdb_destroy_query_result", &a.destroyResult},
		{"chdb_result_buffer", &a.resultBuffer},
		{"chdb_result_length", &a.resultLength},
		{"chdb_result_error", &a.resultError},
		{"chdb_result_rows_written", &a.resultWritten},
		{"chdb_set_signal_handlers_enabled", &a.signalHandlers},
	}
	for _, s := range syms {
		addr, err := purego.Dlsym(lib, s.name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s lacks %s (want libchdb %s): run %s",
				ErrLibraryMissing, path, s.name, Version, SetupCommand)
		}
		purego.RegisterFunc(s.fn, addr)
	}
	return a, nil
}
