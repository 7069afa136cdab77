package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/demo"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// DemoLength is how much of the demo's trace is replayed: all of it (about 10h45m), which takes
// seconds on the demo's virtual clock and gives every page reclaims, moves and tokens to show.
const DemoLength time.Duration = 0

// History is what the demo recorded, opened for reading as the console reads a store.
type History struct {
	Reports report.Reporter // report.Local over the demo's store: the console's one source of figures
	Store   *store.Store
	Fleet   *fleet.Config // the demo's fleet (examples/demo/bursar.yaml)
	Start   time.Time     // when the replayed trace starts
	End     time.Time     // the start of the day the tests run (UTC): the history is yesterday's
	Demo    *demo.Result  // what the demo printed
	DataDir string        // the demo's data directory (its markdown report and charts under report/)
	at      time.Time     // when the demo was recorded (Now)
}

var history struct {
	once    sync.Once
	h       *History
	err     error
	dataDir string
}

// demoTimeout bounds the demo's run: it takes seconds, so a minute's slack covers a loaded CI
// machine without letting a hung run stall the binary until go test's own timeout.
const demoTimeout = 5 * time.Minute

// DemoHistory runs the demo once per test binary (the first test to ask pays for it) and
// returns its history to every test. It fails t when the demo cannot run (libchdb missing: make
// setup). Call Main from TestMain so the history is removed after the tests.
func DemoHistory(t testing.TB) *History {
	t.Helper()
	history.once.Do(func() {
		start := time.Now()
		history.h, history.err = recordDemo(storetest.EmbeddedDir(t))
		if history.err == nil {
			t.Logf("demo recorded %s of history (%s to %s) in %v", history.h.End.Sub(history.h.Start),
				history.h.Start.Format(time.RFC3339), history.h.End.Format(time.RFC3339), time.Since(start).Round(time.Second))
		}
	})
	if history.err != nil {
		t.Fatalf("the demo's history: %v", history.err)
	}
	return history.h
}

// recordDemo runs the demo, its trace ending at the start of today (UTC) so that its history is
// yesterday's: a console on the real clock shows it under window=yesterday, and its session
// cookies expire in the browser's real time (a console on a clock set in the past would hand out
// cookies the browser drops at once). The demo's own default, the start of this hour, would move
// the history within the day and split it over two days after midnight.
//
// It runs with its data under a fresh directory and its ClickHouse files under
// hist (the process's one embedded store directory), then reopens the store it wrote, read-only.
// demo.Run closes the engine when it ends, and the same process may open it again at the same path.
func recordDemo(hist string) (*History, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "examples", "demo")
	cfg, err := fleet.Load(filepath.Join(dir, "bursar.yaml"))
	if err != nil {
		return nil, err
	}
	if history.dataDir, err = os.MkdirTemp("", "bursar-browsertest-demo-*"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), demoTimeout)
	defer cancel()
	const db = "browsertest_demo"
	end := time.Now().UTC().Truncate(24 * time.Hour)
	res, err := demo.Run(ctx, demo.Options{Dir: dir, DataDir: history.dataDir, HistoryDir: hist, Database: db,
		Length: DemoLength, End: end})
	if err != nil {
		return nil, fmt.Errorf("running the demo: %w", err)
	}
	st, err := store.Open(ctx, store.Config{DataDir: hist, Database: db, Owner: "browser test", ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("reopening the demo's store: %w", err)
	}
	return &History{Reports: report.Local{Q: st}, Store: st, Fleet: cfg, Start: res.Window.Since, End: res.Window.Until,
		Demo: res, DataDir: history.dataDir, at: time.Now().UTC().Truncate(time.Second)}, nil
}

// removeHistory closes the history's store and removes its files.
func removeHistory() {
	if history.h != nil {
		_ = history.h.Store.Close()
	}
	if history.dataDir != "" {
		os.RemoveAll(history.dataDir)
	}
	storetest.RemoveEmbeddedDir()
}

// repoRoot is the module's root: the nearest folder above the working directory (a test's
// package folder) that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory: run the tests with go test")
		}
		dir = up
	}
}

// Now is the clock of a console over h in tests: the moment the history was recorded, fixed. A
// page and the API asked after it then run their reports at the same now (the budget report's
// spend grows with the clock, as the demo's last replicas read as still running), and it is the
// day after the history and close to the browser's real time, so session cookies stay valid.
func (h *History) Now() time.Time { return h.at }
