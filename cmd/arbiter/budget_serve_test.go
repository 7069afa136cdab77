package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli"
)

// TestArbiterRunWithoutFleetAnswersBudgetWrites: "arbiter run" with no fleet file places
// nothing, but "arbiter budget set" on the same machine, with no flags but the address, still
// has an arbiter to ask, which records the budget role as the actor.
func TestArbiterRunWithoutFleetAnswersBudgetWrites(t *testing.T) {
	t.Chdir(t.TempDir()) // no ./bursar.yaml
	dir := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runRoot(ctx, nil, "--data-dir", dir, "--log-level", "error", "run", "--listen", addr, "--metrics-listen", "", "--console-listen", "", "--no-history")
	}()
	t.Cleanup(func() { cancel(); <-done })
	var out bytes.Buffer
	var err error
	waitFor(t, "budget set answered", func() bool {
		out.Reset()
		err = runRoot(context.Background(), &out, "--data-dir", dir, "--nats", "nats://"+addr, "--log-level", "error",
			"budget", "set", "p", "--scope", "all", "--limit", "5", "--alert", "80%")
		// until the arbiter is up: first its NATS server, then the part that answers
		return err == nil || !strings.Contains(err.Error(), "connecting to NATS") && !strings.Contains(err.Error(), "no arbiter answers")
	})
	if err != nil || !strings.Contains(out.String(), "by budget") {
		t.Fatalf("budget set: %v\n%s", err, out.String())
	}
}

// runRoot runs the arbiter command line as main wires it.
func runRoot(ctx context.Context, out *bytes.Buffer, args ...string) error {
	var g cli.Globals
	root := newRoot(&g)
	if out == nil {
		out = &bytes.Buffer{}
	}
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
