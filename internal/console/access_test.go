package console

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/report"
)

func TestNewRefusesNonLoopbackWithoutTLS(t *testing.T) {
	cert, key := selfSigned(t)
	tests := []struct {
		name    string
		access  Access
		wantErr string
	}{
		{"all interfaces", Access{Addr: ":8090"}, "needs TLS"},
		{"a public address", Access{Addr: "10.1.2.3:8090"}, "--console-tls-cert"},
		{"any v6", Access{Addr: "[::]:8090"}, "needs TLS"},
		{"cert without key", Access{Addr: "127.0.0.1:8090", TLSCert: cert}, "both the certificate and the key"},
		{"missing files", Access{Addr: ":8090", TLSCert: cert + ".nope", TLSKey: key}, ".nope"},
		{"header without proxies", Access{Addr: "127.0.0.1:8090", TrustedHeader: "X-Forwarded-Email"}, "--console-trusted-proxy"},
		{"bad proxy", Access{Addr: "127.0.0.1:8090", TrustedHeader: "X-Forwarded-Email", TrustedProxies: []string{"10.0.0.0/33"}}, `"10.0.0.0/33"`},
		{"authorization as the header", Access{Addr: "127.0.0.1:8090", TrustedHeader: "authorization", TrustedProxies: []string{"10.0.0.1"}}, "Authorization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Options{Reports: report.Local{}, Access: tt.access})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New(%+v) err = %v, want it to contain %q", tt.access, err, tt.wantErr)
			}
		})
	}
	for _, a := range []Access{{Addr: "127.0.0.1:8090"}, {Addr: "localhost:0"}, {Addr: "[::1]:8090"},
		{Addr: "0.0.0.0:8443", TLSCert: cert, TLSKey: key},
		{Addr: "127.0.0.1:8090", TrustedHeader: "X-Forwarded-Email", TrustedProxies: []string{"10.0.0.0/24", "192.168.1.7"}}} {
		if _, err := New(Options{Reports: report.Local{}, Access: a}); err != nil {
			t.Errorf("New(%+v): %v", a, err)
		}
	}
}

func TestServeRefusesNonLoopbackListenerWithoutTLS(t *testing.T) {
	s, err := New(Options{Reports: report.Local{}, Access: Access{Addr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	ln := fakeListener{addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 8090}}
	if err := s.Serve(t.Context(), ln); !errors.Is(err, errNeedsTLS) {
		t.Errorf("Serve on 10.1.2.3 without TLS = %v, want errNeedsTLS", err)
	}
}

// fakeListener only has an address: Serve must refuse it before accepting anything.
type fakeListener struct {
	net.Listener
	addr net.Addr
}

func (f fakeListener) Addr() net.Addr { return f.addr }

func TestTrustedHeaderOnlyFromProxies(t *testing.T) {
	s, err := New(Options{Reports: report.Local{}, Access: Access{Addr: "127.0.0.1:0", TrustedHeader: "X-Forwarded-Email",
		TrustedProxies: []string{"10.0.0.0/24"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		remote, header, want string
	}{
		{"10.0.0.7:5555", "ops@example.com", "ops@example.com"},
		{"10.0.1.7:5555", "ops@example.com", ""}, // not a proxy: the header is anyone's to set
		{"[::ffff:10.0.0.7]:5555", "ops@example.com", "ops@example.com"},
		{"10.0.0.7:5555", "two words", ""},
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tt.remote
		r.Header.Set("X-Forwarded-Email", tt.header)
		if c, _ := s.identify(r); c.Who != tt.want {
			t.Errorf("from %s with %q: identity %q, want %q", tt.remote, tt.header, c.Who, tt.want)
		}
	}
}

func TestSessionCookieIsSignedAndExpires(t *testing.T) {
	k, err := loadKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := k.newSession("U0APPROVER", now)
	v := k.encode(ss)
	if got, ok := k.decode(v, now.Add(time.Hour)); !ok || got.Who != "U0APPROVER" {
		t.Errorf("decode = %+v, %v", got, ok)
	}
	if _, ok := k.decode(v, now.Add(sessionTTL)); ok {
		t.Error("an expired session was accepted")
	}
	forged := strings.Replace(v, v[:strings.IndexByte(v, '.')], "VTBPVEhFUg", 1) // another identity, same signature
	if _, ok := k.decode(forged, now); ok {
		t.Error("a session with its identity changed was accepted")
	}
	other, _ := loadKey("")
	if _, ok := other.decode(v, now); ok {
		t.Error("a session signed with another key was accepted")
	}
}

func TestSessionKeyIsKeptInTheDataDir(t *testing.T) {
	dir := t.TempDir()
	a, err := loadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.key) != string(b.key) {
		t.Error("the session key changed between two loads: a restart would log everyone out")
	}
	st, _ := os.Stat(filepath.Join(dir, KeyFile))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("session key mode %v, want 0600", st.Mode().Perm())
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKey(dir); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("a damaged key: err = %v", err)
	}
}

func TestLocalPathKeepsRedirectsHere(t *testing.T) {
	for in, want := range map[string]string{"/approvals": "/approvals", "//evil.example": "/", "https://evil.example": "/",
		"": "/", "/\\evil": "/", "/decisions?workload=chat": "/decisions?workload=chat"} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// selfSigned writes a throwaway certificate and key for 127.0.0.1 and returns their paths.
func selfSigned(t *testing.T) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "console-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func TestServeOverTLS(t *testing.T) {
	cert, key := selfSigned(t)
	dir := t.TempDir()
	s, err := New(Options{Reports: report.Local{}, Access: Access{Addr: "0.0.0.0:0", DataDir: dir, TLSCert: cert, TLSKey: key}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	token, _ := IssueToken(dir, "U0APPROVER")
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // the test's own certificate
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "https://" + ln.Addr().String()
	req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader("token="+token))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ck := resp.Cookies(); resp.StatusCode != http.StatusSeeOther || len(ck) != 1 || !ck[0].Secure {
		t.Errorf("login over TLS: %d, cookies %+v; want 303 and a Secure cookie", resp.StatusCode, ck)
	}
	if resp.Header.Get("Strict-Transport-Security") == "" {
		t.Error("no Strict-Transport-Security under TLS")
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + "/login"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest { // Go's TLS server says "HTTP request to an HTTPS server"
			t.Errorf("plain HTTP on the TLS listener: %d, want 400", resp.StatusCode)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after its context ended: %v", err)
	}
}
