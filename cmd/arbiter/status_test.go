package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

func TestStatusRows(t *testing.T) {
	books := map[string]*arbiter.Book{"svc": {Workload: "svc",
		Replicas: []arbiter.Rep{
			{ID: "r1", Location: "a", Market: events.Spot, State: placement.StateReady, PricePerHour: 1},
			{ID: "r2", Location: "a", Market: events.Spot, State: placement.StateReclaimed, PricePerHour: 1},
			{ID: "r3", Location: "b", Market: events.OnDemand, State: placement.StateLaunching, PricePerHour: 3},
			{ID: "r4", Location: "b", Market: events.OnDemand, State: placement.StateDraining, PricePerHour: 3},
		},
		Actions: []arbiter.Record{
			{Target: actuate.Target{Group: actuate.Group{Workload: "svc", Location: "b", Market: events.OnDemand}}, Stage: arbiter.StageCalling},
			{Target: actuate.Target{Group: actuate.Group{Workload: "svc", Location: "b", Market: events.OnDemand}}, Stage: arbiter.StageAwaiting},
		}}}
	rows := statusRows(books)
	want := []map[string]any{
		{"location": "a", "market": "spot", "replicas": 2, "ready": 1, "reclaimed": 1, "usd_per_hour": 2.0, "pending": 0},
		{"location": "b", "market": "on_demand", "replicas": 1, "launching": 1, "draining": 1, "usd_per_hour": 6.0,
			"pending": 1, "awaiting_approval": 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %v", rows)
	}
	for i, w := range want {
		for k, v := range w {
			if rows[i][k] != v {
				t.Errorf("row %d %s = %v, want %v", i, k, rows[i][k], v)
			}
		}
	}
}

// TestStatusWithNothingPlacedSaysWhy: "arbiter status" against an arbiter with no fleet printed a
// bare header. It says that nothing is placed, and what to start.
func TestStatusWithNothingPlacedSaysWhy(t *testing.T) {
	env := bustest.Start(t)
	if err := bus.Ensure(context.Background(), env.JS, bus.Options{}); err != nil {
		t.Fatal(err)
	}
	var g cli.Globals
	root := cli.Root("arbiter", "", "", &g, "", "")
	root.AddCommand(newStatusCmd(&g))
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"--nats", env.Server.ClientURL(), "--log-level", "error",
		"--nats-nkey", bus.SeedFile(env.CredsDir, bus.RoleArbiter), "status"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "no workload is placed") || !strings.Contains(errOut.String(), "arbiter run --config") {
		t.Errorf("status with nothing placed: stderr %q, want why and what to start\nstdout:\n%s", errOut.String(), out.String())
	}
}

// wideBooks is a workload running two offers at location a, one spot launch pending there with
// its reason, and a cut of its on-demand group at b held for an approval due at deadline.
func wideBooks(deadline time.Time) map[string]*arbiter.Book {
	b := actuate.Group{Workload: "svc", Location: "b", Market: events.OnDemand}
	return map[string]*arbiter.Book{"svc": {Workload: "svc",
		Replicas: []arbiter.Rep{
			{ID: "r1", Location: "a", Market: events.Spot, Offer: "a/us-east-1a/p5.xlarge/spot", State: placement.StateReady, PricePerHour: 1},
			{ID: "r2", Location: "a", Market: events.Spot, Offer: "a/us-east-1a/g6.xlarge/spot", State: placement.StateReady, PricePerHour: 1},
			{ID: "r3", Location: "b", Market: events.OnDemand, Offer: "b/us-east-1b/p5.xlarge/on_demand", State: placement.StateReady, PricePerHour: 3},
		},
		Actions: []arbiter.Record{
			{Target: actuate.Target{Group: actuate.Group{Workload: "svc", Location: "a", Market: events.Spot},
				Offer: "a/us-east-1a/p5.xlarge/spot", Reason: "demand_up"}, Stage: arbiter.StageRecorded},
			{Target: actuate.Target{Group: b, Offer: "b/us-east-1b/p5.xlarge/on_demand", Reason: "budget"},
				Stage: arbiter.StageAwaiting, Hold: "h1"},
		},
		Holds: []arbiter.Hold{{ID: "h0", Deadline: deadline.Add(-time.Hour)}, {ID: "h1", Deadline: deadline}}}}
}

func TestStatusWideColumns(t *testing.T) {
	deadline := time.Date(2026, 12, 7, 10, 30, 0, 0, time.UTC)
	books := wideBooks(deadline)
	rows := statusRows(books)
	addWide(rows, books, map[string]string{"p5.xlarge": "H100-80GB", "g6.xlarge": "L4"})
	want := []map[string]string{
		{"location": "a", "instance_type": "p5.xlarge,g6.xlarge", "gpu": "H100-80GB,L4", "reasons": "demand_up", "approval_deadline": ""},
		{"location": "b", "instance_type": "p5.xlarge", "gpu": "H100-80GB", "reasons": "budget", "approval_deadline": "2026-12-07T10:30:00Z"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %v", rows)
	}
	for i, w := range want {
		for k, v := range w {
			if rows[i][k] != v {
				t.Errorf("row %d %s = %q, want %q", i, k, rows[i][k], v)
			}
		}
	}
	var out bytes.Buffer
	if err := cli.Write(&out, "table", wideColumns, rows); err != nil {
		t.Fatal(err)
	}
	header := strings.Fields(strings.SplitN(out.String(), "\n", 2)[0])
	if !slices.Equal(header[len(header)-4:], []string{"INSTANCE_TYPE", "GPU", "REASONS", "APPROVAL_DEADLINE"}) {
		t.Errorf("wide header = %v", header)
	}
}

// statusEnv is a bus whose placement bucket holds books, and the status command to run on it.
func statusEnv(t *testing.T, books map[string]*arbiter.Book) *bustest.Env {
	t.Helper()
	ctx := context.Background()
	env := bustest.Start(t)
	if err := bus.Ensure(ctx, env.JS, bus.Options{}); err != nil {
		t.Fatal(err)
	}
	kv, err := env.JS.KeyValue(ctx, bus.BucketPlacement)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range books {
		if err := (arbiter.KVBooks{KV: kv}).Save(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// runStatus runs "arbiter status args…" against env until it returns or ctx ends.
func runStatus(ctx context.Context, env *bustest.Env, out, errOut io.Writer, args ...string) error {
	var g cli.Globals
	root := cli.Root("arbiter", "", "", &g, "", "")
	root.AddCommand(newStatusCmd(&g))
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetArgs(append([]string{"--nats", env.Server.ClientURL(), "--log-level", "error",
		"--nats-nkey", bus.SeedFile(env.CredsDir, bus.RoleArbiter), "status"}, args...))
	return root.ExecuteContext(ctx)
}

// TestStatusWideReadsGPUModels: -o wide names the GPU of each instance type from the latest
// replica.state the arbiter published for the workload and location.
func TestStatusWideReadsGPUModels(t *testing.T) {
	ctx := context.Background()
	env := statusEnv(t, wideBooks(time.Date(2026, 12, 7, 10, 30, 0, 0, time.UTC)))
	pub := bus.NewPublisher(env.JS)
	for _, e := range []*events.ReplicaState{
		{Meta: events.Meta{At: time.Now().UTC()}, Workload: "svc", Location: "a", Market: events.Spot, Provider: "aws",
			Offer: "a/us-east-1a/g6.xlarge/spot", GPUModel: "L4", GPUs: 1, Desired: 1, Ready: 1},
		{Meta: events.Meta{At: time.Now().UTC()}, Workload: "svc", Location: "b", Market: events.OnDemand, Provider: "aws",
			Offer: "b/us-east-1b/p5.xlarge/on_demand", GPUModel: "H100-80GB", GPUs: 1, Desired: 1, Ready: 1},
	} {
		if err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if err := runStatus(ctx, env, &out, &errOut, "-o", "wide"); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "APPROVAL_DEADLINE") {
		t.Fatalf("status -o wide:\n%s", out.String())
	}
	for i, want := range []string{"p5.xlarge,g6.xlarge  H100-80GB,L4  demand_up", "p5.xlarge  H100-80GB  budget  2026-12-07T10:30:00Z"} {
		if !strings.Contains(strings.Join(strings.Fields(lines[i+1]), "  "), want) {
			t.Errorf("row %d = %q, want it to show %q", i+1, lines[i+1], want)
		}
	}
}

// syncBuffer is a buffer one goroutine writes while another reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStatusWatchReadsAgainUntilCancelled: --watch prints a block per read, every --interval,
// and returns without error when its context ends.
func TestStatusWatchReadsAgainUntilCancelled(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			env := statusEnv(t, wideBooks(time.Date(2026, 12, 7, 10, 30, 0, 0, time.UTC)))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errOut syncBuffer
			done := make(chan error, 1)
			go func() { done <- runStatus(ctx, env, &out, &errOut, "--watch", "--interval", "20ms", "-o", format) }()
			blocks := func() int {
				if format == "json" {
					return strings.Count(out.String(), `"location": "a"`)
				}
				return strings.Count(out.String(), "WORKLOAD")
			}
			deadline := time.Now().Add(10 * time.Second)
			for blocks() < 2 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("watch ended with %v, want nil on cancel", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("watch did not stop when its context ended")
			}
			if blocks() < 2 {
				t.Fatalf("%d blocks printed, want at least 2:\n%s\nstderr: %s", blocks(), out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "\n\n") || strings.Contains(out.String(), "\x1b[") {
				t.Errorf("not a terminal: want blocks apart by a blank line and no screen clearing:\n%q", out.String())
			}
		})
	}
}

func TestStatusWatchRefusesANonPositiveInterval(t *testing.T) {
	env := statusEnv(t, nil)
	var out, errOut bytes.Buffer
	err := runStatus(context.Background(), env, &out, &errOut, "--watch", "--interval", "0s")
	if err == nil || !strings.Contains(err.Error(), "--interval") {
		t.Errorf("err = %v, want one naming --interval", err)
	}
}
