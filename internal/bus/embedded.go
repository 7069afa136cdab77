package bus

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EmbeddedOptions configures the in-process NATS server.
type EmbeddedOptions struct {
	Host     string // default 127.0.0.1
	Port     int    // default 4222; -1 picks a free port
	StoreDir string // JetStream's files
}

// StartEmbedded starts an in-process nats-server with JetStream and waits until it accepts
// connections. Call Shutdown and WaitForShutdown to stop it.
func StartEmbedded(o EmbeddedOptions) (*server.Server, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port == 0 {
		o.Port = 4222
	}
	if o.StoreDir == "" {
		return nil, fmt.Errorf("embedded NATS needs a store directory")
	}
	if err := os.MkdirAll(o.StoreDir, 0o750); err != nil {
		return nil, fmt.Errorf("creating NATS store %s: %w", o.StoreDir, err)
	}
	s, err := server.NewServer(&server.Options{
		ServerName: "bursar-embedded", Host: o.Host, Port: o.Port,
		JetStream: true, StoreDir: o.StoreDir, NoSigs: true, NoLog: true,
	})
	if err != nil {
		return nil, fmt.Errorf("configuring embedded NATS: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(15 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded NATS did not start on %s:%d (is the port taken? use --listen)", o.Host, o.Port)
	}
	return s, nil
}

// Connect dials NATS at url and returns the connection and its JetStream context. Credentials
// come from the URL's user info or from the file named by BURSAR_NATS_CREDS, never from flags,
// and are never part of an error or a log line.
func Connect(ctx context.Context, rawURL, name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("disconnected from NATS", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("reconnected to NATS", "url", Redact(c.ConnectedUrl())) }),
	}
	if creds := os.Getenv("BURSAR_NATS_CREDS"); creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	if deadline, ok := ctx.Deadline(); ok {
		opts = append(opts, nats.Timeout(time.Until(deadline)))
	}
	nc, err := nats.Connect(rawURL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to NATS at %s: %w (is `arbiter run` or a NATS server running? set --nats or BURSAR_NATS)",
			Redact(rawURL), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("opening JetStream at %s: %w", Redact(rawURL), err)
	}
	return nc, js, nil
}
