package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus"
)

// TestBusAuthUsesTheRoleKeyUnderDataDir: with no credential flags a program uses the key "arbiter
// run" wrote for its role under --data-dir; flags win, and a user's password comes only from the
// environment or a file.
func TestBusAuthUsesTheRoleKeyUnderDataDir(t *testing.T) {
	dir := t.TempDir()
	g := &Globals{DataDir: dir}
	if _, err := bus.LoadOrCreateKeys(g.NATSCredsDir()); err != nil {
		t.Fatal(err)
	}
	a, err := g.BusAuth(bus.RoleCollector)
	if err != nil {
		t.Fatal(err)
	}
	if a.DefaultCreds != filepath.Join(dir, "nats", "creds") || a.Role != bus.RoleCollector {
		t.Fatalf("auth = %+v, want the collector's key under %s", a, dir)
	}
	if _, err := a.Options(); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g.Auth = NATSAuth{User: "ops", PasswordFile: pw}
	if a, err = g.BusAuth(bus.RoleReport); err != nil || a.Password != "s3cret" || a.User != "ops" {
		t.Fatalf("password file: auth %q/%q, err %v", a.User, a.Password, err)
	}
	t.Setenv("BURSAR_NATS_PASSWORD", "fromenv")
	g.Auth.PasswordFile = ""
	if a, err = g.BusAuth(bus.RoleReport); err != nil || a.Password != "fromenv" {
		t.Fatalf("password env: auth %q, err %v", a.Password, err)
	}
}

func TestBusAuthRefusesAmbiguousOrIncompleteCredentials(t *testing.T) {
	for _, tt := range []struct {
		name string
		auth NATSAuth
		env  string
		want string
	}{
		{"creds and nkey", NATSAuth{Creds: "a.creds", Nkey: "b.nk"}, "", "only one"},
		{"user without password", NATSAuth{User: "ops"}, "", "BURSAR_NATS_PASSWORD"},
		{"password without user", NATSAuth{}, "pw", "no --nats-user"},
		{"cert without key", NATSAuth{TLSCert: "c.pem"}, "", "--nats-tls-key"},
		{"missing nkey file", NATSAuth{Nkey: "/nonexistent/x.nk"}, "", "/nonexistent/x.nk"},
		{"missing password file", NATSAuth{User: "ops", PasswordFile: "/nonexistent/pw"}, "", "--nats-password-file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BURSAR_NATS_PASSWORD", tt.env)
			g := &Globals{Auth: tt.auth}
			_, err := g.NATSOptions(bus.RoleReport)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
