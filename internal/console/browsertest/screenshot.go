package browsertest

import (
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// ScreenshotsEnv names the folder screenshots go to; by default testdata/screenshots beside the
// test, which git ignores.
const ScreenshotsEnv = "BURSAR_SCREENSHOTS"

var screenshotDir struct {
	once sync.Once
	dir  string
	err  error
}

// Screenshots returns the folder screenshots are written to, made on first use; the first test
// that asks logs its path.
func Screenshots(t testing.TB) string {
	t.Helper()
	screenshotDir.once.Do(func() {
		dir := os.Getenv(ScreenshotsEnv)
		if dir == "" {
			dir = filepath.Join("testdata", "screenshots")
		}
		if screenshotDir.dir, screenshotDir.err = filepath.Abs(dir); screenshotDir.err == nil {
			screenshotDir.err = os.MkdirAll(screenshotDir.dir, 0o755)
		}
		if screenshotDir.err == nil {
			t.Logf("screenshots in %s", screenshotDir.dir)
		}
	})
	if screenshotDir.err != nil {
		t.Fatalf("screenshot folder (%s): %v", ScreenshotsEnv, screenshotDir.err)
	}
	return screenshotDir.dir
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot writes the whole page (not only the window) as name.png into Screenshots and
// returns the file's path. A name is a short word for the page ("fleet", "decision-cause").
func (p *Tab) Screenshot(name string) string {
	p.t.Helper()
	png := run(p, "taking a screenshot", chromedp.FullScreenshot(100)) // quality 100: PNG
	path := filepath.Join(Screenshots(p.t), unsafeName.ReplaceAllString(name, "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatalf("writing screenshot: %v", err)
	}
	p.t.Logf("screenshot %s", path)
	return path
}
