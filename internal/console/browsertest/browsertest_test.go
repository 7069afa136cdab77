package browsertest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/report"
)

func TestMain(m *testing.M) { Main(m) }

func TestFind(t *testing.T) {
	tests := []struct {
		name      string
		env       string
		installed []string
		want      string
		wantErr   string
	}{
		{name: "chromium on PATH", installed: []string{"chromium", "chromium-browser"}, want: "/usr/bin/chromium"},
		{name: "chromium-browser when no chromium", installed: []string{"chromium-browser"}, want: "/usr/bin/chromium-browser"},
		{name: "the variable first", env: "/opt/chrome", installed: []string{"/opt/chrome", "chromium"}, want: "/opt/chrome"},
		{name: "the variable naming nothing", env: "/opt/none", installed: []string{"chromium"}, wantErr: BrowserEnv + "=/opt/none"},
		{name: "none", wantErr: "apt-get install chromium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == BrowserEnv {
					return tt.env
				}
				return ""
			}
			lookPath := func(name string) (string, error) { // as exec.LookPath: a path is taken as it is
				for _, p := range tt.installed {
					if p == name && strings.Contains(name, "/") {
						return name, nil
					}
					if p == name {
						return "/usr/bin/" + name, nil
					}
				}
				return "", fs.ErrNotExist
			}
			got, err := Find(getenv, lookPath)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Find = %q, %v; want an error naming %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Find = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := Find(func(string) string { return "" }, func(string) (string, error) { return "", fs.ErrNotExist }); !errors.Is(err, errNoBrowser) {
		t.Errorf("no browser: %v, want errNoBrowser (the tests skip on it)", err)
	}
}

// staticSite is a page with what the console's pages have: a link to follow, a form to submit,
// a table to read; its form answers with the value it got.
func staticSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>start</title><h1 data-test="title">Fleet</h1>
<table data-test="rows"><thead><tr><th>workload</th><th>$/h</th></tr></thead><tbody><tr><td>chat</td><td data-col="usd_per_hour">1.25</td></tr><tr><td>embed</td><td data-col="usd_per_hour">0.50</td></tr></tbody></table>
<a data-test="next" href="/next">next</a>
<form data-test="form" method="post" action="/echo"><input name="who"><input type="hidden" name="csrf" value="c1"><button>send</button></form>`)
	})
	mux.HandleFunc("GET /next", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p data-test="where">second page</p>`)
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><p data-test="got">%s/%s</p>`, r.PostFormValue("who"), r.PostFormValue("csrf"))
	})
	return mux
}

// TestStaticPage proves the harness on a page served by httptest: it loads, reads, follows a
// link, submits a form and takes a full-page screenshot.
func TestStaticPage(t *testing.T) {
	srv := httptest.NewServer(staticSite())
	defer srv.Close()
	tab := NewTab(t)
	tab.Open(srv.URL + "/")
	if got := tab.Text(TestSel("title")); got != "Fleet" {
		t.Errorf("title %q, want Fleet", got)
	}
	rows := tab.Rows(TestSel("rows"))
	if want := [][]string{{"workload", "$/h"}, {"chat", "1.25"}, {"embed", "0.50"}}; fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	table := tab.Table(TestSel("rows"))
	if want := []map[string]string{{"workload": "chat", "usd_per_hour": "1.25"}, {"workload": "embed", "usd_per_hour": "0.50"}}; fmt.Sprint(table) != fmt.Sprint(want) {
		t.Errorf("table %v, want %v (cells by data-col, else by header)", table, want)
	}
	if tab.Has(TestSel("where")) {
		t.Error("the second page's paragraph is on the first")
	}
	path := tab.Screenshot("harness-static")
	png, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG", path)
	}

	tab.Follow("next")
	if got := tab.Text(TestSel("where")); got != "second page" || tab.URL() != srv.URL+"/next" {
		t.Errorf("after following: %q at %s", got, tab.URL())
	}

	tab.Open(srv.URL + "/")
	tab.Submit(TestSel("form"), map[string]string{"who": "U0123"})
	if got := tab.Text(TestSel("got")); got != "U0123/c1" {
		t.Errorf("the form posted %q, want U0123/c1 (the filled field and the hidden one)", got)
	}
}

// TestTabsAreSeparate checks that each test's tab has its own cookies: what one tab's site sets,
// another tab does not send.
func TestTabsAreSeparate(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "one", Path: "/"})
		fmt.Fprint(w, `<!doctype html><p>set</p>`)
	})
	mux.HandleFunc("GET /get", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		v := "none"
		if err == nil {
			v = c.Value
		}
		fmt.Fprintf(w, `<!doctype html><p data-test="cookie">%s</p>`, v)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	a, b := NewTab(t), NewTab(t)
	a.Open(srv.URL + "/set")
	a.Open(srv.URL + "/get")
	b.Open(srv.URL + "/get")
	if got := a.Text(TestSel("cookie")); got != "one" {
		t.Errorf("the tab that set the cookie sends %q", got)
	}
	if got := b.Text(TestSel("cookie")); got != "none" {
		t.Errorf("another tab sends %q, want none: tabs share cookies", got)
	}
}

// TestDemoHistory checks that the demo's history reads as the console will read it: a report
// through the Reporter has a row for each of the demo's workloads, over the replayed window.
func TestDemoHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo; skipped with -short")
	}
	h := DemoHistory(t)
	if today := time.Now().UTC().Truncate(24 * time.Hour); h.End.After(today) || !h.Start.Before(h.End) || h.End.Sub(h.Start) > 24*time.Hour {
		t.Fatalf("history from %v to %v, want it within the day before %v", h.Start, h.End, today)
	}
	if now := h.Now(); now.Before(h.End) || !now.Before(h.End.Add(24*time.Hour)) || time.Since(now) > time.Hour {
		t.Errorf("the console's clock reads %v, want it the day after the history (%v), near the real time", now, h.End)
	}
	ctx := t.Context()
	req := report.NewRequest("cost", report.Options{Window: report.Window{Since: h.Start, Until: h.End}, Now: h.End, By: []report.Dim{report.Workload}, Fleet: h.Fleet})
	res, err := h.Reports.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range res.Rows {
		if w, ok := r["workload"].(string); ok {
			seen[w] = true
		}
	}
	for _, w := range h.Fleet.Workloads {
		if !seen[w.Name] {
			t.Errorf("no cost row for workload %s: %v", w.Name, res.Rows)
		}
	}
}
