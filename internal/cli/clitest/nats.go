package clitest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// OpenNATS starts a nats-server with JetStream and no users: it lets in any client, with any
// credentials or none, as a server installed without accounts does. The programs must refuse it
// unless --nats-insecure. It stops when the test ends; its URL is ClientURL().
func OpenNATS(tb testing.TB) *server.Server {
	tb.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: tb.TempDir(),
		NoLog: true, NoSigs: true})
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		tb.Fatal("nats-server did not start")
	}
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}
