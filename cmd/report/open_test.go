package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/health/healthtest"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
	"github.com/bursar-dev/bursar/internal/store"
)

// noNATS is a NATS URL where nothing answers, so a report never finds an owner to ask.
const noNATS = "nats://127.0.0.1:1"

// execute runs report with args and returns what it printed and its error.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot(&cli.Globals{})
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// executeSplit runs report with args and returns its standard output and error apart.
func executeSplit(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRoot(&cli.Globals{})
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestFocusParquetRefusesATerminal: "report focus -o parquet" without --file wrote binary to the
// terminal. It is refused before anything is read, with the flag to use.
func TestFocusParquetRefusesATerminal(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil || !cli.IsTerminal(tty) {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	root := newRoot(&cli.Globals{})
	root.SetOut(tty)
	var errOut bytes.Buffer
	root.SetErr(&errOut)
	root.SetArgs([]string{"focus", "--month", "2026-11", "-o", "parquet", "--data-dir", t.TempDir(), "--nats", noNATS, "--fleet", ""})
	err = root.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--file") {
		t.Errorf("focus -o parquet to a terminal = %v, want a refusal naming --file", err)
	}
}

// TestMissingFleetNamesTheFlag: "report reconcile" without a fleet file said "pass the file with
// --config"; the report's flag is --fleet.
func TestMissingFleetNamesTheFlag(t *testing.T) {
	for _, args := range [][]string{{"reconcile"}, {"savings"}, {"cost", "--by", "team"}} {
		missing := filepath.Join(t.TempDir(), "bursar.yaml")
		_, err := execute(t, append(args, "--fleet", missing, "--data-dir", t.TempDir(), "--nats", noNATS)...)
		if err == nil || !strings.Contains(err.Error(), "--fleet") || strings.Contains(err.Error(), "--config") {
			t.Errorf("report %v without its fleet file = %v, want an error naming --fleet (not --config)", args, err)
		}
	}
}

// TestReportNeverCreatesAStore: "report cost -o yaml" created ./bursar-data and applied three
// migrations before it refused the flag. A bad flag is refused first, and a report reads an
// existing store only: with none, it says what to start and leaves the directory as it was.
func TestReportNeverCreatesAStore(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown format", []string{"cost", "-o", "xml"}, "want table, json, yaml, csv or markdown"},
		{"no store", []string{"cost", "-o", "yaml"}, "arbiter run"},
		{"no store, availability", []string{"availability", "--period", "1d"}, "arbiter run"},
		{"no store, focus", []string{"focus", "--month", "2026-11"}, "arbiter run"},
		{"no store, serve dry run", []string{"serve", "--dry-run", "--report", "cost"}, "arbiter run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			dataDir := filepath.Join(tmp, "bursar-data")
			args := append(tt.args, "--data-dir", dataDir, "--nats", noNATS, "--fleet", "")
			out, err := execute(t, args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("report %v = %v, want an error containing %q\n%s", tt.args, err, tt.wantErr, out)
			}
			entries, _ := os.ReadDir(tmp)
			for _, e := range entries {
				t.Errorf("report %v created %s", tt.args, e.Name())
			}
		})
	}
}

// TestServeChecksTheSlackTokenAtStart: "report serve" accepted any token and failed first at
// its next scheduled run (Monday 09:00 by default). It asks Slack (auth.test) at start and
// refuses a token Slack refuses, saying which setting to fix and without the token.
// internal/slack/slacktest answers no auth.test yet, so a stand-in for Slack's API answers here.
func TestServeChecksTheSlackTokenAtStart(t *testing.T) {
	var asked atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/auth.test" {
			_, _ = w.Write([]byte(`{"ok":false,"error":"unknown_method"}`))
			return
		}
		asked.Add(1)
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
	}))
	defer api.Close()
	t.Setenv("BURSAR_SLACK_API_URL", api.URL+"/api/")
	t.Setenv("BURSAR_SLACK_BOT_TOKEN", "xoxb-wrong-token")
	t.Setenv("BURSAR_SLACK_CHANNEL", "C0REPORTS")
	_, err := execute(t, "serve", "--report", "cost", "--data-dir", t.TempDir(), "--nats", noNATS, "--fleet", "",
		"--metrics-listen", "127.0.0.1:0")
	if err == nil || asked.Load() != 1 || !strings.Contains(err.Error(), "invalid_auth") ||
		!strings.Contains(err.Error(), "BURSAR_SLACK_BOT_TOKEN_FILE") || strings.Contains(err.Error(), "xoxb-wrong-token") {
		t.Fatalf("serve with a token Slack refuses = %v (auth.test asked %d times), want a refusal at start", err, asked.Load())
	}
}

// withAuthTest fronts a fake Slack at upstream with an auth.test that accepts token, which
// internal/slack/slacktest does not answer yet, and passes every other call through.
func withAuthTest(t *testing.T, upstream, token string) string {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/auth.test") {
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = r.ParseForm()
		if r.PostForm.Get("token") != token && r.Header.Get("Authorization") != "Bearer "+token {
			_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true,"team":"Bursar","user":"bursar-bot"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + strings.TrimPrefix(upstream, u.Scheme+"://"+u.Host)
}

// TestServeOncePostsToSlack: "report serve --once" printed instead of posting, so a CronJob
// could not run a scheduled report. --once posts through the same poster serve uses; --dry-run
// prints and needs no Slack.
func TestServeOncePostsToSlack(t *testing.T) {
	dataDir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{DataDir: dataDir, Owner: "report test"})
	if err != nil {
		t.Fatalf("making a store to report on: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	slack := slacktest.New(t, "xoxb-test")
	t.Setenv("BURSAR_SLACK_API_URL", slack.URL)
	t.Setenv("BURSAR_SLACK_BOT_TOKEN", slack.Token)
	t.Setenv("BURSAR_SLACK_CHANNEL", "C0REPORTS")
	common := []string{"serve", "--report", "cost,idle", "--data-dir", dataDir, "--nats", noNATS, "--fleet", ""}

	out, err := execute(t, append(common, "--once")...)
	if err != nil {
		t.Fatalf("serve --once: %v\n%s", err, out)
	}
	msgs := slack.Messages()
	if len(msgs) != 2 {
		t.Fatalf("serve --once posted %d messages, want 2 (cost, idle)\n%s", len(msgs), out)
	}
	for _, m := range msgs {
		if m.Channel != "C0REPORTS" || m.Method != "chat.postMessage" {
			t.Errorf("posted %s to %s, want chat.postMessage to C0REPORTS", m.Method, m.Channel)
		}
	}
	if strings.Contains(out, "## ") {
		t.Errorf("serve --once printed a report as well as posting it:\n%s", out)
	}

	t.Setenv("BURSAR_SLACK_BOT_TOKEN", "")
	out, err = execute(t, append(common, "--dry-run")...)
	if err != nil {
		t.Fatalf("serve --dry-run without Slack: %v\n%s", err, out)
	}
	if !strings.Contains(out, "## ") || len(slack.Messages()) != 2 {
		t.Errorf("serve --dry-run posted (%d messages now) or printed nothing:\n%s", len(slack.Messages()), out)
	}
}

// noSlackChild marks the process that runs TestServeWithoutSlackIdlesHealthy's body.
const noSlackChild = "BURSAR_TEST_NO_SLACK_CHILD"

// TestServeWithoutSlackIdlesHealthy: Slack is optional, but "report serve" exited without a bot
// token, so the chart's default report Deployment crash-looped. With Slack left out it keeps
// serving its probes and metrics, ready while the history opens, runs no report, and says why
// once; a half-configured Slack, and --once (a CronJob that is there to post), are still
// refused at start.
// It runs in a process of its own: libchdb keeps the first data path a process opens.
func TestServeWithoutSlackIdlesHealthy(t *testing.T) {
	if os.Getenv(noSlackChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestServeWithoutSlackIdlesHealthy$", "-test.count=1")
		cmd.Env = append(os.Environ(), noSlackChild+"=1")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("the test in its own process: %v\n%s", err, out)
		}
		return
	}
	dataDir := t.TempDir()
	st, err := store.Open(context.Background(), store.Config{DataDir: dataDir, Owner: "report test"})
	if err != nil {
		t.Fatalf("making a store to report on: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"BURSAR_SLACK_BOT_TOKEN", "BURSAR_SLACK_BOT_TOKEN_FILE", "BURSAR_SLACK_CHANNEL"} {
		t.Setenv(k, "")
	}
	common := []string{"serve", "--report", "cost", "--schedule", "* * * * *", "--data-dir", dataDir, "--nats", noNATS, "--fleet", ""}
	addr := healthtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log bytes.Buffer
	done := make(chan error, 1)
	go func() {
		root := newRoot(&cli.Globals{})
		root.SetOut(&log)
		root.SetErr(&log)
		root.SetArgs(append(common, "--metrics-listen", addr))
		done <- root.ExecuteContext(ctx)
	}()
	base := "http://" + addr
	healthtest.Await(t, base+"/readyz", http.StatusOK)
	healthtest.Await(t, base+"/livez", http.StatusOK)
	if _, body := healthtest.Get(base + "/metrics"); !strings.Contains(body, "bursar_build_info{") || strings.Contains(body, "bursar_report_runs_total{") {
		t.Errorf("/metrics without Slack: want bursar_build_info and no report run:\n%s", body)
	}
	select {
	case err := <-done:
		t.Fatalf("serve without Slack exited: %v\n%s", err, log.String())
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve without Slack, stopped: %v", err)
	}
	if n := strings.Count(log.String(), "no Slack configured"); n != 1 {
		t.Errorf("serve without Slack said why %d times, want once:\n%s", n, log.String())
	}

	for _, tt := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
	}{
		{"a token and no channel", map[string]string{"BURSAR_SLACK_BOT_TOKEN": "xoxb-test"}, nil, "BURSAR_SLACK_CHANNEL"},
		{"a channel and no token", map[string]string{"BURSAR_SLACK_CHANNEL": "C0REPORTS"}, nil, "BURSAR_SLACK_BOT_TOKEN_FILE"},
		{"--once", nil, []string{"--once"}, "BURSAR_SLACK_BOT_TOKEN_FILE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := execute(t, append(append(common, "--metrics-listen", ""), tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("serve = %v, want an error naming %s", err, tt.wantErr)
			}
		})
	}
}
