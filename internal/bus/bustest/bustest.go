// Package bustest starts a real in-process NATS server with JetStream for tests.
package bustest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/url"
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
	// URL carries a test user with the arbiter's permissions, so code under test that takes a
	// URL connects as the arbiter would. Server.ClientURL() has no credentials: it is refused.
	URL string
	// CredsDir holds each role's nkey seed, as "arbiter run" writes them (bus.SeedFile).
	CredsDir string
	// StoreDir holds JetStream's files.
	StoreDir string
	users    []bus.User
}

// Start starts a server on a random port with a temporary store; it stops when the test ends.
func Start(tb testing.TB) *Env { return StartWith(tb) }

// StartWith is Start with more users, such as the per-person budget users of a cluster.
func StartWith(tb testing.TB, users ...bus.User) *Env {
	tb.Helper()
	store := tb.TempDir()
	pass := randomPassword(tb)
	users = append([]bus.User{{Role: bus.RoleArbiter, Name: "bustest", Password: pass}}, users...)
	env := &Env{CredsDir: bus.CredsDir(store), StoreDir: store, users: users}
	env.start(tb, -1)
	u, err := url.Parse(env.Server.ClientURL())
	if err != nil {
		tb.Fatal(err)
	}
	u.User = url.UserPassword("bustest", pass)
	env.URL = u.String()
	env.Conn, env.JS = env.ConnectAs(tb, bus.RoleArbiter)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Ensure(ctx, env.JS, bus.Options{}); err != nil {
		tb.Fatal(err)
	}
	return env
}

// start starts the server on port (-1: a free one) and the store; it stops when the test ends.
func (e *Env) start(tb testing.TB, port int) {
	tb.Helper()
	s, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: port, StoreDir: e.StoreDir, Users: e.users})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	e.Server = s
}

// Restart stops the server, calls whileDown (nil: nothing), and starts it again on the same
// port and store. Connections made before reconnect on their own; Conn and JS are new.
func (e *Env) Restart(tb testing.TB, whileDown func()) {
	tb.Helper()
	port := e.Server.Addr().(*net.TCPAddr).Port
	e.Server.Shutdown()
	e.Server.WaitForShutdown()
	if whileDown != nil {
		whileDown()
	}
	e.start(tb, port)
	e.Conn, e.JS = e.ConnectAs(tb, bus.RoleArbiter)
}

// ConnectAs connects with role's key, as that program would on this machine (its JetStream as
// bus.ForRole gives it); the connection closes when the test ends.
func (e *Env) ConnectAs(tb testing.TB, role string) (*nats.Conn, jetstream.JetStream) {
	tb.Helper()
	opts, err := e.Auth(role).Options()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, js, err := bus.Connect(ctx, e.Server.ClientURL(), tb.Name()+"-"+role, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return nc, bus.ForRole(role, js)
}

// Auth is role's default authentication against this server.
func (e *Env) Auth(role string) bus.Auth {
	return bus.Auth{Role: role, DefaultCreds: e.CredsDir}
}

func randomPassword(tb testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}
