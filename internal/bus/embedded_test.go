package bus

import (
	"context"
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/testkit"
)

func TestNonLoopbackListenNeedsTLS(t *testing.T) {
	cert, key, _ := writeTLS(t)
	for _, tt := range []struct {
		host      string
		tls, want bool
	}{
		{"127.0.0.1", false, true},
		{"localhost", false, true},
		{"::1", false, true},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"10.1.2.3", false, false},
		{"nats.example.com", false, false},
		{"0.0.0.0", true, true},
	} {
		t.Run(tt.host, func(t *testing.T) {
			o := EmbeddedOptions{Host: tt.host, StoreDir: t.TempDir(), CredsDir: privateDir(t)}
			if tt.tls {
				o.TLSCert, o.TLSKey = cert, key
			}
			_, err := serverOptions(o)
			if tt.want && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.want && (err == nil || !strings.Contains(err.Error(), "--nats-tls-cert")) {
				t.Fatalf("err = %v, want a refusal naming --nats-tls-cert", err)
			}
		})
	}
	if _, err := StartEmbedded(EmbeddedOptions{Host: "0.0.0.0", Port: -1, StoreDir: t.TempDir()}); err == nil {
		t.Fatal("the embedded server listened on 0.0.0.0 without TLS")
	}
}

func TestKeysAreMadeOnceAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	first, err := LoadOrCreateKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range Roles {
		if first[role] == "" || first[role] != again[role] {
			t.Errorf("%s: key %q, then %q", role, first[role], again[role])
		}
		fi, err := os.Stat(SeedFile(dir, role))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", role, fi.Mode().Perm())
		}
	}
}

func TestMalformedKeyFileIsRefused(t *testing.T) {
	for _, content := range []string{"", "not a seed\n", "SUAXXXX\n", "UAB4QJ2EKD3LWPFAXDZ3UBV2CIRKI4HDVTIP6YETCVWMRF5QMRAXCNNC\n"} {
		dir := privateDir(t)
		if err := os.WriteFile(SeedFile(dir, RoleArbiter), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreateKeys(dir)
		if err == nil || !strings.Contains(err.Error(), SeedFile(dir, RoleArbiter)) {
			t.Errorf("%q: err = %v, want one naming the file", content, err)
		}
	}
}

// privateDir is a new directory only its owner may enter, as a credentials dir must be.
func privateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "creds")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func FuzzKeyFile(f *testing.F) {
	f.Add([]byte("SUAMK2FG4MI6UE3ACF3FK3OIQBCEIEZV7NSWFFEW63UXMRLFM2XLAXK4GY\n"))
	f.Add([]byte("-----BEGIN USER NKEY SEED-----\nSUAX\n------END USER NKEY SEED------\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		if pub, err := publicKey("k.nk", content); err == nil && !strings.HasPrefix(pub, "U") {
			t.Fatalf("accepted %q as a user key: %q", content, pub)
		}
	})
}

// TestTLSWithATestCAWorksEndToEnd starts the embedded server with a certificate signed by a CA
// made here: the collector publishes through it trusting that CA, and a client that does not
// trust it is refused.
func TestTLSWithATestCAWorksEndToEnd(t *testing.T) {
	cert, key, ca := writeTLS(t)
	store := t.TempDir()
	s, err := StartEmbedded(EmbeddedOptions{Port: -1, StoreDir: store, TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	anc, ajs, err := ConnectEmbedded(ctx, s, store, "arbiter", log)
	if err != nil {
		t.Fatal(err)
	}
	defer anc.Close()
	if err := Ensure(ctx, ajs, Options{}); err != nil {
		t.Fatal(err)
	}
	auth := Auth{Role: RoleCollector, DefaultCreds: CredsDir(store), TLSCA: ca}
	opts, err := auth.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := Connect(ctx, s.ClientURL(), "collector", log, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if !nc.TLSRequired() {
		t.Fatal("the connection is not TLS")
	}
	if _, err := js.Publish(ctx, "bursar.price.aws.us-east-1", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	auth.TLSCA = ""
	opts, err = auth.Options()
	if err != nil {
		t.Fatal(err)
	}
	if bad, _, err := Connect(ctx, s.ClientURL(), "untrusting", log, append(opts, nats.MaxReconnects(0))...); err == nil {
		bad.Close()
		t.Fatal("a client that does not trust the test CA connected")
	}
}

// writeTLS makes a CA and a server certificate for 127.0.0.1 and localhost signed by it, and
// returns the files: certificate, key, CA.
func writeTLS(t *testing.T) (cert, key, ca string) {
	t.Helper()
	c := testkit.NewCA(t, "bursar test CA")
	c.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	return c.Path("server.pem"), c.Path("server-key.pem"), c.Path("ca.pem")
}

// TestEmbeddedServerLogsToBursarsLog: the server's own lines reach Bursar's log (they were
// switched off, which hid a store that is not writable or a damaged message block).
func TestEmbeddedServerLogsToBursarsLog(t *testing.T) {
	var buf testkit.Log
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := StartEmbedded(EmbeddedOptions{Port: -1, StoreDir: t.TempDir(), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s.WaitForShutdown()
	if out := buf.String(); !strings.Contains(out, "nats-server: ") || !strings.Contains(out, "JetStream") {
		t.Errorf("Bursar's log has no line from the server about JetStream:\n%s", out)
	}
	for _, tt := range []struct {
		logf  func(serverLog, string, ...any)
		level string
	}{{serverLog.Warnf, "WARN"}, {serverLog.Errorf, "ERROR"}, {serverLog.Fatalf, "ERROR"}} {
		var buf testkit.Log
		tt.logf(serverLog{slog.New(slog.NewTextHandler(&buf, nil))}, "store %s not writable\n", "/x")
		if out := buf.String(); !strings.Contains(out, "level="+tt.level) || !strings.Contains(out, `"nats-server: store /x not writable"`) {
			t.Errorf("got %q, want a %s line with the server's words", out, tt.level)
		}
	}
}
