package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/bursar-dev/bursar/internal/bus"
)

// NATSAuth are the NATS credential and TLS flags every program shares. Each is a file path or a
// name; the password alone is never a flag value (BURSAR_NATS_PASSWORD or --nats-password-file).
type NATSAuth struct {
	Creds, Nkey, User, PasswordFile string
	TLSCA, TLSCert, TLSKey          string
	// Insecure accepts a server that requires no authentication (--nats-insecure).
	Insecure bool
}

func (a *NATSAuth) bind(f *pflag.FlagSet) {
	f.StringVar(&a.Creds, "nats-creds", "", "NATS credentials file (JWT and seed) for a NATS cluster (env BURSAR_NATS_CREDS)")
	f.StringVar(&a.Nkey, "nats-nkey", "", "file holding an nkey seed to authenticate with. Default: this program's key that \"arbiter run\" wrote under --data-dir (nats/creds/ROLE.nk) (env BURSAR_NATS_NKEY)")
	f.StringVar(&a.User, "nats-user", "", "NATS user name; the password comes from BURSAR_NATS_PASSWORD or --nats-password-file (env BURSAR_NATS_USER)")
	f.StringVar(&a.PasswordFile, "nats-password-file", "", "file holding the password of --nats-user (env BURSAR_NATS_PASSWORD_FILE)")
	f.StringVar(&a.TLSCA, "nats-tls-ca", "", "CA bundle that signs the NATS server's certificate (env BURSAR_NATS_TLS_CA)")
	f.StringVar(&a.TLSCert, "nats-tls-cert", "", "TLS certificate: the client's for a NATS server, the embedded server's for \"arbiter run\" (env BURSAR_NATS_TLS_CERT)")
	f.StringVar(&a.TLSKey, "nats-tls-key", "", "key of --nats-tls-cert (env BURSAR_NATS_TLS_KEY)")
	f.BoolVar(&a.Insecure, "nats-insecure", false, "connect even to a NATS server that requires no authentication, where any client can act as any role "+
		"(publish prices and reclaims, approve budgets, take the leader lease); only for a throwaway test server (env BURSAR_NATS_INSECURE)")
}

// NATSCredsDir is where the embedded server of "arbiter run" keeps the roles' keys.
func (g *Globals) NATSCredsDir() string { return bus.CredsDir(g.NATSStoreDir()) }

// NATSStoreDir is the embedded server's store under --data-dir.
func (g *Globals) NATSStoreDir() string { return filepath.Join(g.DataDir, "nats") }

// BusAuth is how role authenticates: the flags, else its key under --data-dir.
func (g *Globals) BusAuth(role string) (bus.Auth, error) {
	a := bus.Auth{Role: role, Creds: g.Auth.Creds, NkeyFile: g.Auth.Nkey, User: g.Auth.User,
		TLSCA: g.Auth.TLSCA, TLSCert: g.Auth.TLSCert, TLSKey: g.Auth.TLSKey}
	if g.DataDir != "" {
		a.DefaultCreds = g.NATSCredsDir()
	}
	a.Password = os.Getenv("BURSAR_NATS_PASSWORD")
	if g.Auth.PasswordFile != "" {
		b, err := os.ReadFile(g.Auth.PasswordFile)
		if err != nil {
			return a, fmt.Errorf("reading --nats-password-file: %w", err)
		}
		a.Password = strings.TrimSpace(string(b))
	}
	return a, nil
}

// Dial connects to url (NATSURL when empty) as role, named name.
func (g *Globals) Dial(ctx context.Context, url, role, name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	opts, err := g.NATSOptions(role)
	if err != nil {
		return nil, nil, err
	}
	if url == "" {
		url = g.NATSURL()
	}
	nc, js, err := bus.Connect(ctx, url, name, log, opts...)
	if errors.Is(err, nats.ErrNkeysNotSupported) {
		// nats.go refuses to send an nkey to a server that asked for no authentication, before
		// CheckServerAuth could say what that means.
		return nil, nil, fmt.Errorf("%w: the NATS server at %s requires no authentication, so any client can act as any "+
			"Bursar role there; configure accounts and users on it (deploy/nats/accounts.conf, docs/deploy.md step 1), or, "+
			"on a throwaway test server, connect without credentials and pass --nats-insecure", err, bus.Redact(url))
	}
	if err != nil {
		return nil, nil, err
	}
	if err := g.CheckServerAuth(nc, log); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, bus.ForRole(role, js), nil
}

// CheckServerAuth refuses a connection to a server that asked for no authentication, unless
// --nats-insecure. A successful connect proves nothing: nats-server accepts a client's
// credentials when it has no users configured (nats-server#4324), so without this check every
// program would run, and no role's permissions would be enforced. The server's INFO says
// whether it required authentication. With --nats-insecure such a server is accepted, and
// said once.
func (g *Globals) CheckServerAuth(nc *nats.Conn, log *slog.Logger) error {
	if nc.AuthRequired() {
		return nil
	}
	url := bus.Redact(nc.ConnectedUrl())
	if !g.Auth.Insecure {
		return fmt.Errorf("the NATS server at %s requires no authentication: any client that reaches it can act as any "+
			"Bursar role (publish prices and reclaims, approve budgets, take the leader lease), and the per-role "+
			"permissions of docs/security.md are not enforced. Configure accounts and users on it (deploy/nats/accounts.conf, "+
			"docs/deploy.md step 1), or pass --nats-insecure (env BURSAR_NATS_INSECURE) to accept that risk on a test server", url)
	}
	if g.insecureTold.CompareAndSwap(false, true) {
		log.Warn("--nats-insecure: the NATS server requires no authentication; any client that reaches it can act as any role", "url", url)
	}
	return nil
}

// NATSOptions are role's connection options from the flags, for code that connects itself.
func (g *Globals) NATSOptions(role string) ([]nats.Option, error) {
	a, err := g.BusAuth(role)
	if err != nil {
		return nil, err
	}
	return a.Options()
}
