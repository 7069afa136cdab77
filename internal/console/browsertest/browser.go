package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The environment the harness reads.
const (
	BrowserEnv = "BURSAR_CHROMIUM"        // the browser's executable, when not chromium on PATH
	RequireEnv = "BURSAR_REQUIRE_BROWSER" // "1": a missing browser fails the tests instead of skipping them
)

// errNoBrowser says no browser was found; the tests skip on it unless RequireEnv is set.
var errNoBrowser = errors.New("no Chromium found: install it with `apt-get install chromium`, or set " +
	BrowserEnv + " to its executable")

// Find returns the browser to run: $BURSAR_CHROMIUM when set (it must exist), else chromium or
// chromium-browser on PATH. getenv and lookPath are os.Getenv and exec.LookPath outside tests.
func Find(getenv func(string) string, lookPath func(string) (string, error)) (string, error) {
	if p := getenv(BrowserEnv); p != "" {
		found, err := lookPath(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", BrowserEnv, p, err)
		}
		return found, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := lookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errNoBrowser
}

// browser is the one Chromium of the test binary, started on first use.
var browser struct {
	mu      sync.Mutex
	started bool
	ctx     context.Context // a chromedp context whose browser runs; tabs are its children
	stop    func()
	err     error
}

// startTimeout bounds the browser's start (its DevTools address on stderr); generous, as
// a loaded CI machine can take seconds to start Chromium.
const startTimeout = 2 * time.Minute

// shared returns the running browser's context, starting it on first call. A failed start is
// remembered, so every test reports it instead of each trying again.
func shared() (context.Context, error) {
	browser.mu.Lock()
	defer browser.mu.Unlock()
	if browser.started {
		return browser.ctx, browser.err
	}
	browser.started = true
	path, err := Find(os.Getenv, exec.LookPath)
	if err != nil {
		browser.err = err
		return nil, err
	}
	browser.ctx, browser.stop, browser.err = start(path)
	return browser.ctx, browser.err
}

// start runs Chromium headless from path. The sandbox is switched off only when running as root,
// where Chromium refuses to start with it (it cannot drop root's rights into its namespace
// sandbox): CI containers run as root, and the pages it loads are the test's own.
func start(path string) (context.Context, func(), error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(1280, 900),
		chromedp.WSURLReadTimeout(startTimeout),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc, chromedp.WithErrorf(quiet))
	stop := func() { cancelCtx(); cancelAlloc() }
	// The first Run starts the browser, and its context must be the browser's for its whole
	// life: no timeout here (WSURLReadTimeout bounds the start).
	if err := chromedp.Do(ctx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting %s headless: %w", path, err)
	}
	return ctx, stop, nil
}

// quiet drops chromedp's reports of protocol events it cannot decode: Chromium sends events
// newer than the protocol version chromedp was generated from, and they do not concern the tests.
func quiet(string, ...any) {}

// closeBrowser stops the browser, if one started.
func closeBrowser() {
	browser.mu.Lock()
	defer browser.mu.Unlock()
	if browser.stop != nil {
		browser.stop()
		browser.stop = nil
	}
}

// Main runs the tests of a binary that uses the browser or the demo's history, then stops the
// browser and removes the history. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	closeBrowser()
	removeHistory()
	os.Exit(code)
}

// need returns the browser's context for t, or ends t: skipped when no browser is installed
// (failed when RequireEnv is 1), failed when one is installed but does not start.
func need(t testing.TB) context.Context {
	t.Helper()
	ctx, err := shared()
	if errors.Is(err, errNoBrowser) && os.Getenv(RequireEnv) != "1" {
		t.Skipf("browser test skipped: %v (%s=1 makes this a failure)", err, RequireEnv)
	}
	if err != nil {
		t.Fatalf("browser test: %v", err)
	}
	return ctx
}
