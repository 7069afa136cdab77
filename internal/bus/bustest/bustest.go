// Package bustest starts a real in-process NATS server with JetStream for tests.
package bustest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
)

// Env is a running server, a connection to it and its JetStream context, with Bursar's streams
// and buckets created.
type Env struct {
	Server *server.Server
	Conn   *nats.Conn
	JS     jetstream.JetStream
	URL    string
}

// Start starts a server on a random port with a temporary store; it stops when the test ends.
func Start(tb testing.TB) *Env {
	tb.Helper()
	s, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: -1, StoreDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, js, err := bus.Connect(ctx, s.ClientURL(), tb.Name(), slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	if err := bus.Ensure(ctx, js, bus.Options{}); err != nil {
		tb.Fatal(err)
	}
	return &Env{Server: s, Conn: nc, JS: js, URL: s.ClientURL()}
}
