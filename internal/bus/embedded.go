package bus

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	// CredsDir holds each role's nkey seed (default CredsDir(StoreDir)); missing ones are made.
	CredsDir string
	// TLSCert and TLSKey are the server's certificate and key files; a listen address other
	// than loopback needs them.
	TLSCert, TLSKey string
	// Users are extra users beside the roles' keys, each in its role's account (tests use
	// password users; see bustest).
	Users []User
	// Log receives the server's own warnings and errors (its notices as debug lines); nil
	// discards them.
	Log *slog.Logger
	// Cluster joins this server to others on this machine; nil runs it alone.
	Cluster *ClusterOptions
}

// ClusterOptions make an embedded server one node of a JetStream cluster on loopback (the soak's;
// a cluster across machines is a NATS deployment of its own, see docs/security.md).
type ClusterOptions struct {
	Name   string   // the cluster's name, the same on every node
	Node   string   // this node's name, unique in the cluster
	Port   int      // the route listener on 127.0.0.1; -1 picks a free port
	Routes []string // the other nodes' route URLs, nats-route://127.0.0.1:PORT
	// Advertise is the route address this node tells the others about (default its route
	// listener); the others connect there only to a node they have no route to.
	Advertise string
}

// StartEmbedded starts an in-process nats-server with JetStream and waits until it accepts
// connections. Only the roles' nkeys (made on first start under CredsDir) may connect, each
// with its role's Permissions: anonymous clients are refused. Call Shutdown and
// WaitForShutdown to stop it.
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
	if o.CredsDir == "" {
		o.CredsDir = CredsDir(o.StoreDir)
	}
	if err := os.MkdirAll(o.StoreDir, 0o750); err != nil {
		return nil, fmt.Errorf("creating NATS store %s: %w", o.StoreDir, err)
	}
	if o.Cluster == nil {
		if err := adoptDefaultAccount(o.StoreDir); err != nil {
			return nil, err
		}
	}
	opts, err := serverOptions(o)
	if err != nil {
		return nil, err
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("configuring embedded NATS: %w", err)
	}
	if o.Log != nil {
		s.SetLoggerV2(serverLog{o.Log}, false, false, false)
	}
	go s.Start()
	if !s.ReadyForConnections(15 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded NATS did not start on %s:%d with its store in %s (its log says why: "+
			"a port taken (use --listen), a store that is not writable or full)", o.Host, o.Port, o.StoreDir)
	}
	return s, nil
}

// serverOptions builds the server's options: the roles' users, and TLS where asked (or where a
// non-loopback address needs it).
func serverOptions(o EmbeddedOptions) (*server.Options, error) {
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, fmt.Errorf("embedded NATS TLS needs both --nats-tls-cert and --nats-tls-key")
	}
	if o.TLSCert == "" && !isLoopback(o.Host) {
		return nil, fmt.Errorf("embedded NATS on %s without TLS: listen on 127.0.0.1, or give --nats-tls-cert and --nats-tls-key", o.Host)
	}
	keys, err := LoadOrCreateKeys(o.CredsDir)
	if err != nil {
		return nil, err
	}
	accounts, err := AccountsConfig(roleUsers(keys, o.Users))
	if err != nil {
		return nil, err
	}
	opts := &server.Options{}
	if err := opts.ProcessConfigString(accounts); err != nil {
		return nil, fmt.Errorf("configuring embedded NATS accounts: %w", err)
	}
	opts.ServerName, opts.Host, opts.Port = "bursar-embedded", o.Host, o.Port
	opts.JetStream, opts.StoreDir, opts.NoSigs, opts.NoLog = true, o.StoreDir, true, o.Log == nil
	if c := o.Cluster; c != nil {
		if c.Name == "" || c.Node == "" {
			return nil, fmt.Errorf("an embedded NATS cluster node needs a cluster name and a node name")
		}
		opts.ServerName = c.Node
		opts.Cluster = server.ClusterOpts{Name: c.Name, Host: "127.0.0.1", Port: c.Port, NoAdvertise: true, Advertise: c.Advertise}
		if len(c.Routes) > 0 {
			opts.Routes = server.RoutesFromStr(strings.Join(c.Routes, ","))
		}
	}
	if o.TLSCert != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: o.TLSCert, KeyFile: o.TLSKey})
		if err != nil {
			return nil, fmt.Errorf("embedded NATS TLS (%s, %s): %w", o.TLSCert, o.TLSKey, err)
		}
		opts.TLSConfig, opts.TLS = tc, true
	}
	return opts, nil
}

// isLoopback reports whether host only accepts connections from this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Connect dials NATS at url and returns the connection and its JetStream context. Credentials
// and TLS come in extra (see Auth.Options), never from flag values, and are never part of an
// error or a log line.
func Connect(ctx context.Context, rawURL, name string, log *slog.Logger, extra ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("disconnected from NATS", "err", err)
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn("NATS refused or dropped a message", "err", err)
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("reconnected to NATS", "url", Redact(c.ConnectedUrl())) }),
	}
	opts = append(opts, extra...)
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

// ConnectEmbedded connects in-process to s, the embedded server started on storeDir, as the
// arbiter with the key StartEmbedded wrote: no socket, so no TLS is needed for it.
func ConnectEmbedded(ctx context.Context, s *server.Server, storeDir, name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	opts, err := Auth{Role: RoleArbiter, NkeyFile: SeedFile(CredsDir(storeDir), RoleArbiter)}.Options()
	if err != nil {
		return nil, nil, err
	}
	// In-process the server asks for no TLS, but a tls:// URL would make the client insist.
	url := strings.Replace(s.ClientURL(), "tls://", "nats://", 1)
	return Connect(ctx, url, name, log, append(opts, nats.InProcessServer(s))...)
}

// Ready checks that streams exist, for a program whose role may not create them.
func Ready(ctx context.Context, js jetstream.JetStream, streams ...string) error {
	for _, name := range streams {
		if _, err := js.Stream(ctx, name); err != nil {
			return fmt.Errorf("stream %s: %w (start \"arbiter run\" once against this NATS: it creates the streams)", name, err)
		}
	}
	return nil
}

// StreamDir is where the embedded server started on storeDir keeps stream's files.
func StreamDir(storeDir, stream string) string {
	return filepath.Join(storeDir, "jetstream", Account(RoleArbiter), "streams", stream)
}

// adoptDefaultAccount moves the streams and buckets of a store written before the roles had
// accounts (JetStream's default account, $G) to the arbiter's account, so an upgrade keeps its
// budgets, placements and audit log. Only a single server's store can move this way: a cluster's
// is described in its meta log (docs/security.md says how to move one).
func adoptDefaultAccount(storeDir string) error {
	old := filepath.Join(storeDir, "jetstream", "$G")
	dst := filepath.Join(storeDir, "jetstream", Account(RoleArbiter))
	if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if err := os.Rename(old, dst); err != nil {
		return fmt.Errorf("moving the NATS store's streams from %s to %s (the arbiter's account): %w", old, dst, err)
	}
	return nil
}
