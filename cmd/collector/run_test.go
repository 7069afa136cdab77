package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/events"
)

// shared is a file under ../shared/data, the real data beside the repository.
func shared(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "data", rel)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is absent (the shared data folder sits beside the repository)", p)
	}
	return p
}

func readShared(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(shared(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeIMDS answers like EC2's metadata service with IMDSv2 enforced and a spot interruption
// notice pending: a session token from PUT is required on every GET; no rebalance (404).
func fakeIMDS(t *testing.T, action []byte) *httptest.Server {
	const token = "AQAEAFake-imds-session-token=="
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/latest/api/token" {
			fmt.Fprint(w, token)
			return
		}
		if r.Header.Get("X-aws-ec2-metadata-token") != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/latest/dynamic/instance-identity/document":
			fmt.Fprint(w, `{"accountId":"123456789012","availabilityZone":"us-east-1a","instanceId":"i-0b662ef9931388ba0",
"instanceType":"p5.48xlarge","privateIp":"10.0.0.12","region":"us-east-1"}`)
		case "/latest/meta-data/spot/instance-action":
			w.Write(action)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// seen collects the events published on bursar.> by type.
type seen struct {
	mu     sync.Mutex
	byType map[events.Type][]events.Event
	bad    []error
}

func (s *seen) add(m *nats.Msg) {
	evs, err := events.DecodeAll(m.Data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.bad = append(s.bad, fmt.Errorf("%s: %w", m.Subject, err))
		return
	}
	for _, e := range evs {
		s.byType[e.EventType()] = append(s.byType[e.EventType()], e)
	}
}

func (s *seen) count(t events.Type) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byType[t])
}

func (s *seen) first(t events.Type) events.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byType[t][0]
}

func TestRunPublishesEveryKindAndStopsCleanly(t *testing.T) {
	env := bustest.Start(t)
	catalog, err := filepath.Abs(shared(t, "prices/skypilot-catalog/aws_vms_gpu_subset.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's document, due two minutes from now (a past deadline is clamped to "now").
	deadline := time.Now().UTC().Add(2 * time.Minute).Truncate(time.Second)
	action := strings.Replace(string(readShared(t, "provider-formats/fixtures/aws-imds-spot-instance-action.json")),
		"2026-09-13T12:00:00Z", deadline.Format(time.RFC3339), 1)
	if !strings.Contains(action, deadline.Format(time.RFC3339)) {
		t.Fatalf("the instance-action fixture changed: %s", action)
	}
	imds := fakeIMDS(t, []byte(action))
	page := readShared(t, "provider-formats/fixtures/vllm-metrics.txt")
	vllm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(page) }))
	t.Cleanup(vllm.Close)
	openGPU, gpus := mockGPUs(t)

	config := filepath.Join(t.TempDir(), "collector.yaml")
	writeFile(t, config, fmt.Sprintf(`
location: aws-use1
node: node-a
prices:
  sources:
    - kind: skypilot
      files: [%q]
watchers:
  aws_imds: {endpoint: %q, interval: 1h}
gpu: {interval: 1h}
scrape:
  interval: 1h
  targets:
    - {url: %q, server: vllm, workload: llama-8b, replica: llama-8b-0}
`, catalog, imds.URL, vllm.URL+"/metrics"))

	got := &seen{byType: map[events.Type][]events.Event{}}
	sub, err := env.Conn.Subscribe("bursar.>", got.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	g := &cli.Globals{NATS: env.URL}
	o := runOptions{config: config, metricsListen: "127.0.0.1:0"}
	done := make(chan error, 1)
	go func() {
		done <- runCollector(ctx, g, o, slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil)), runDeps{openGPU: openGPU})
	}()

	want := map[events.Type]int{"price.observed": 1, "capacity.reclaimed": 1, "tokens.sample": 1, "gpu.sample": gpus}
	waitFor(t, done, func() bool {
		for typ, n := range want {
			if got.count(typ) < n {
				return false
			}
		}
		return true
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("collector run returned %v after cancellation, want nil", err)
	}

	if len(got.bad) > 0 {
		t.Errorf("undecodable events: %v", got.bad)
	}
	if r := got.first("capacity.reclaimed").(*events.CapacityReclaimed); r.Instance != "i-0b662ef9931388ba0" ||
		r.Location != "aws-use1" || !r.Deadline.Equal(deadline) {
		t.Errorf("reclaim = %+v, want instance i-0b662ef9931388ba0 in aws-use1 with the notice's deadline", r)
	}
	if s := got.first("tokens.sample").(*events.TokensSample); s.PromptTokens != 2987112 || s.Location != "aws-use1" {
		t.Errorf("tokens = %+v, want the fixture's 2987112 prompt tokens in aws-use1", s)
	}
	if gpus > 0 {
		if s := got.first("gpu.sample").(*events.GPUSample); s.Model != "H100-80GB" || s.Node != "node-a" {
			t.Errorf("gpu sample = %+v, want an H100-80GB on node-a", s)
		}
	}
	for _, stream := range []string{bus.Market, bus.Telemetry} {
		info, err := env.JS.Stream(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if n := info.CachedInfo().State.Msgs; n == 0 {
			t.Errorf("stream %s holds no events", stream)
		}
	}
	if strings.Contains(logs.String(), "Fake-imds-session-token") {
		t.Errorf("the IMDS session token was logged:\n%s", logs.String())
	}
}

func TestRunWithABadConfigFailsAtStartNamingFileLineAndField(t *testing.T) {
	config := filepath.Join(t.TempDir(), "collector.yaml")
	writeFile(t, config, "location: aws-use1\nwatchers:\n  aws_imds:\n    interval: -5s\n")
	var g cli.Globals
	root := cli.Root("collector", "", "", &g, "nats://127.0.0.1:1", "")
	root.AddCommand(newRunCmd(&g))
	root.SetArgs([]string{"run", "--config", config, "--metrics-listen", ""})
	root.SetErr(&bytes.Buffer{})
	err := root.ExecuteContext(context.Background())
	want := config + `:4: field "watchers.aws_imds.interval": must not be negative`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error = %v\nwant it to start with %s", err, want)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls until ok, failing the test if the collector stops first or nothing comes
// within a generous bound (a hang guard, not a timing assertion).
func waitFor(t *testing.T, done <-chan error, ok func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	guard := time.After(60 * time.Second)
	for !ok() {
		select {
		case err := <-done:
			t.Fatalf("collector run stopped early: %v", err)
		case <-guard:
			t.Fatal("collector run did not publish every kind of event")
		case <-tick.C:
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
