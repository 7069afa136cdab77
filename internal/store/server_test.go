package store

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/testkit"
)

// handshake is what the TLS listener saw of one client: the certificate it presented and the
// first bytes it sent after the handshake (the native protocol's hello, user and password in it).
type handshake struct {
	peerCN string
	hello  []byte
	err    error
}

// tlsListener accepts one connection with a server certificate from ca, requiring a client
// certificate signed by the same CA, and reports what it saw.
func tlsListener(t *testing.T, ca *testkit.CA) (string, <-chan handshake) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	cfg := &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, "clickhouse-server", x509.ExtKeyUsageServerAuth)},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	seen := make(chan handshake, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			seen <- handshake{err: err}
			return
		}
		defer c.Close()
		seen <- readHello(c.(*tls.Conn))
	}()
	return l.Addr().String(), seen
}

func readHello(c *tls.Conn) handshake {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := c.Handshake(); err != nil {
		return handshake{err: err}
	}
	h := handshake{peerCN: c.ConnectionState().PeerCertificates[0].Subject.CommonName}
	buf := make([]byte, 4096)
	for len(h.hello) < len(buf) && !bytes.Contains(h.hello, []byte(testPassword)) {
		n, err := c.Read(buf[len(h.hello):])
		h.hello = buf[:len(h.hello)+n]
		if err != nil {
			h.err = err
			break
		}
	}
	return h
}

// testPassword is the password the TLS tests put in a file; readHello reads until it has come.
const testPassword = "s3cret-from-file"

// OpenServer speaks TLS to the server, verifies it against the CA and presents the client
// certificate, whether the files are named by the environment or by the DSN; the password read
// from a file is what goes over the wire, and the error never shows it.
func TestOpenServerTLSClientCertificate(t *testing.T) {
	tests := []struct {
		name   string
		scheme string // the native protocol, or HTTP over TLS
		viaDSN bool   // files named by DSN parameters, or by the environment
	}{
		{"native, environment", "clickhouse://", false},
		{"native, DSN parameters", "clickhouse://", true},
		{"https, environment", "https://", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ca := testkit.NewCA(t, "bursar test CA")
			addr, seen := tlsListener(t, ca)
			ca.Issue(t, "bursar-client", x509.ExtKeyUsageClientAuth)
			pwFile := filepath.Join(t.TempDir(), "password")
			if err := os.WriteFile(pwFile, []byte(testPassword+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv(PasswordFileEnv, pwFile)
			dsn := tc.scheme + "bursar@" + addr + "/bursar?dial_timeout=5s"
			if tc.scheme == "https://" {
				dsn += "&secure=true"
			}
			if tc.viaDSN {
				dsn += "&tls_ca=" + ca.Path("ca.pem") + "&tls_cert=" + ca.Path("bursar-client.pem") + "&tls_key=" + ca.Path("bursar-client-key.pem")
			} else {
				t.Setenv(TLSCAEnv, ca.Path("ca.pem"))
				t.Setenv(TLSCertEnv, ca.Path("bursar-client.pem"))
				t.Setenv(TLSKeyEnv, ca.Path("bursar-client-key.pem"))
			}
			err := openServer(t, dsn)
			h := <-seen
			if h.peerCN != "bursar-client" {
				t.Fatalf("server saw client certificate %q (handshake: %v), want bursar-client", h.peerCN, h.err)
			}
			if !bytes.Contains(h.hello, []byte(testPassword)) || bytes.Contains(h.hello, []byte(testPassword+"\n")) {
				t.Errorf("hello %q does not carry the password from the file (newline dropped)", h.hello)
			}
			if err == nil || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("OpenServer to a listener that hangs up = %v, want an error without the password", err)
			}
		})
	}
}

// A server whose certificate the configured CA did not sign is refused before anything is sent,
// with an error that names the CA file and what to check.
func TestOpenServerWrongCA(t *testing.T) {
	serverCA, otherCA := testkit.NewCA(t, "server CA"), testkit.NewCA(t, "some other CA")
	addr, seen := tlsListener(t, serverCA)
	t.Setenv(TLSCAEnv, otherCA.Path("ca.pem"))
	err := openServer(t, "clickhouse://bursar@"+addr+"/bursar?dial_timeout=5s")
	if err == nil {
		t.Fatal("OpenServer trusted a server signed by another CA")
	}
	for _, want := range []string{addr, "did not verify against the CA " + otherCA.Path("ca.pem"), TLSCAEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if h := <-seen; h.peerCN != "" || len(h.hello) > 0 {
		t.Errorf("the untrusted server got a client certificate %q and %d bytes", h.peerCN, len(h.hello))
	}
}

func openServer(t *testing.T, dsn string) error {
	t.Helper()
	sc, err := ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := OpenServer(ctx, sc)
	if err == nil {
		eng.Close()
	}
	return err
}

// What OpenServer takes from the environment is checked before anything is dialled; each error
// names the variable or file to fix and never the password.
func TestApplyServerSecrets(t *testing.T) {
	ca := testkit.NewCA(t, "bursar test CA")
	ca.Issue(t, "client", x509.ExtKeyUsageClientAuth)
	dir := t.TempDir()
	pwFile, emptyFile, notPEM := filepath.Join(dir, "pw"), filepath.Join(dir, "empty"), filepath.Join(dir, "not.pem")
	for path, body := range map[string]string{pwFile: "from-file\r\n", emptyFile: "\n", notPEM: "hunter2 is not a certificate"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name         string
		dsn          string
		env          map[string]string
		wantPassword string
		wantCA       bool
		wantCert     bool
		wantErr      []string
	}{
		{name: "nothing set", dsn: "clickhouse://h:9000"},
		{name: "password from the environment", dsn: "clickhouse://h:9000", env: map[string]string{PasswordEnv: "hunter2"}, wantPassword: "hunter2"},
		{name: "password from a file", dsn: "clickhouse://h:9000", env: map[string]string{PasswordFileEnv: pwFile}, wantPassword: "from-file"},
		{name: "both password sources", dsn: "clickhouse://h:9000", env: map[string]string{PasswordEnv: "hunter2", PasswordFileEnv: pwFile},
			wantErr: []string{PasswordEnv, PasswordFileEnv, "unset one"}},
		{name: "missing password file", dsn: "clickhouse://h:9000", env: map[string]string{PasswordFileEnv: missing},
			wantErr: []string{missing, PasswordFileEnv, "no such file"}},
		{name: "empty password file", dsn: "clickhouse://h:9000", env: map[string]string{PasswordFileEnv: emptyFile}, wantErr: []string{emptyFile, "is empty"}},
		{name: "CA only", dsn: "clickhouse://h:9440", env: map[string]string{TLSCAEnv: ca.Path("ca.pem")}, wantCA: true},
		{name: "CA and client certificate", dsn: "clickhouse://h:9440?secure=true&tls_server_name=ch", wantCA: true, wantCert: true,
			env: map[string]string{TLSCAEnv: ca.Path("ca.pem"), TLSCertEnv: ca.Path("client.pem"), TLSKeyEnv: ca.Path("client-key.pem")}},
		{name: "DSN wins over the environment", dsn: "clickhouse://h:9440?tls_ca=" + notPEM, env: map[string]string{TLSCAEnv: ca.Path("ca.pem")},
			wantErr: []string{notPEM, "the DSN's tls_ca", "no PEM certificate"}},
		{name: "CA not PEM", dsn: "clickhouse://h:9440", env: map[string]string{TLSCAEnv: notPEM, PasswordEnv: "hunter2"},
			wantErr: []string{notPEM, TLSCAEnv, "no PEM certificate"}},
		{name: "missing CA", dsn: "clickhouse://h:9440", env: map[string]string{TLSCAEnv: missing}, wantErr: []string{missing, TLSCAEnv, "no such file"}},
		{name: "cert without key", dsn: "clickhouse://h:9440", env: map[string]string{TLSCertEnv: ca.Path("client.pem")},
			wantErr: []string{TLSCertEnv, TLSKeyEnv, "both"}},
		{name: "key that does not match", dsn: "clickhouse://h:9440", env: map[string]string{TLSCertEnv: ca.Path("client.pem"), TLSKeyEnv: notPEM},
			wantErr: []string{ca.Path("client.pem"), notPEM, TLSKeyEnv}},
		{name: "TLS files over plain http", dsn: "http://h:8123", env: map[string]string{TLSCAEnv: ca.Path("ca.pem")}, wantErr: []string{"https://"}},
		{name: "skip_verify with a CA", dsn: "clickhouse://h:9440?secure=true&skip_verify=true", env: map[string]string{TLSCAEnv: ca.Path("ca.pem")},
			wantErr: []string{"skip_verify", TLSCAEnv}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := ParseDSN(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			env := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			err = applyServerSecrets(&sc, env)
			if len(tc.wantErr) > 0 {
				checkSecretsError(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.Options.Auth.Password; got != tc.wantPassword {
				t.Errorf("password = %q, want %q", got, tc.wantPassword)
			}
			cfg := sc.Options.TLS
			if (cfg != nil && cfg.RootCAs != nil) != tc.wantCA || (cfg != nil && len(cfg.Certificates) == 1) != tc.wantCert {
				t.Errorf("TLS config %+v: want CA %v, client certificate %v", cfg, tc.wantCA, tc.wantCert)
			}
			if tc.wantCert && cfg.ServerName != "ch" {
				t.Errorf("ServerName = %q, want the DSN's tls_server_name", cfg.ServerName)
			}
		})
	}
}

func checkSecretsError(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "from-file") {
		t.Errorf("error %q shows a secret", err)
	}
}
