package console

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
)

// Access says who may reach the console and how a person proves who they are.
type Access struct {
	// Addr is the address the console listens on. Any address but loopback needs TLS.
	Addr string
	// DataDir holds the tokens file (TokensFile) and the session key (KeyFile). Empty: no token
	// login, and sessions last as long as the process.
	DataDir string
	// TLSCert and TLSKey are PEM files; given together, the console serves HTTPS only.
	TLSCert, TLSKey string
	// TrustedHeader names the header an authenticating proxy sets to the user's identity (e.g.
	// X-Forwarded-Email). It is read only from TrustedProxies.
	TrustedHeader string
	// TrustedProxies are the proxies' addresses, as CIDRs ("10.0.0.5/32") or addresses.
	TrustedProxies []string
}

// The ways a caller proves an identity.
const (
	viaNone    = ""
	viaSession = "session" // the session cookie set by POST /login
	viaBearer  = "bearer"  // Authorization: Bearer <token>, for the API
	viaProxy   = "proxy"   // TrustedHeader, from a trusted proxy
)

// caller is who sent a request, and how they proved it.
type caller struct {
	Who, Via string
	// CSRF is the token a write by this caller must carry; empty for bearer callers, whose
	// credential a browser does not send on its own.
	CSRF string
	// binding is what CSRF is bound to.
	binding string
}

// access is Access checked and ready: parsed proxies, loaded TLS.
type access struct {
	Access
	proxies []netip.Prefix
	tls     *tls.Config
}

// Errors the option checks give; New wraps them with the option at fault.
var errNeedsTLS = errors.New("needs TLS")

// Check checks a console's access settings as New does, so that a program refuses bad flags
// before it opens anything else. No address is no console: nothing to check.
func (a Access) Check() error {
	if a.Addr == "" {
		return nil
	}
	_, err := newAccess(a)
	return err
}

// newAccess checks a, refusing any non-loopback address without TLS.
func newAccess(a Access) (*access, error) {
	out := &access{Access: a}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		return nil, errors.New("console TLS: give both the certificate and the key (--console-tls-cert, --console-tls-key)")
	}
	if a.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(a.TLSCert, a.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("console TLS: loading %s and %s: %w", a.TLSCert, a.TLSKey, err)
		}
		out.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if out.tls == nil && !loopback(a.Addr) {
		return nil, fmt.Errorf("console address %q is not loopback and %w: give --console-tls-cert and --console-tls-key, "+
			"or listen on 127.0.0.1 (and reach it through an SSH tunnel or an authenticating proxy)", a.Addr, errNeedsTLS)
	}
	var err error
	if out.proxies, err = parseProxies(a.TrustedProxies); err != nil {
		return nil, err
	}
	if a.TrustedHeader != "" && len(out.proxies) == 0 {
		return nil, fmt.Errorf("console trusted header %s: give the proxies it is trusted from (--console-trusted-proxy CIDR)", a.TrustedHeader)
	}
	if a.TrustedHeader != "" && http.CanonicalHeaderKey(a.TrustedHeader) == "Authorization" {
		return nil, errors.New("console trusted header: Authorization carries tokens; name the header the proxy sets, e.g. X-Forwarded-Email")
	}
	if a.DataDir != "" {
		out.DataDir = filepath.Clean(a.DataDir)
	}
	return out, nil
}

// parseProxies reads proxy addresses: CIDRs, or single addresses.
func parseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("console trusted proxy %q: want a CIDR (10.0.0.0/24) or an address (10.0.0.5)", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// loopback reports whether addr ("127.0.0.1:8090", "[::1]:8090", "localhost:8090") listens on
// loopback only. An empty host listens everywhere.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// fromProxy reports whether r came straight from a trusted proxy.
func (a *access) fromProxy(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap()
	for _, p := range a.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// origin is the scheme and host the browser addressed this console by.
func (a *access) origin(r *http.Request) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if a.fromProxy(r) {
		if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
			scheme = p
		}
		if h := r.Header.Get("X-Forwarded-Host"); h != "" {
			host = h
		}
	}
	return scheme + "://" + host
}

// sameOrigin reports whether a write came from a page of this console: its Origin header, or
// failing that its Referer, names this console's origin. A browser always sends one of them on a
// cross-site POST, so a forged form fails here even before its missing CSRF token.
func (a *access) sameOrigin(r *http.Request) bool {
	want := a.origin(r)
	if o := r.Header.Get("Origin"); o != "" {
		return o == want
	}
	ref, err := url.Parse(r.Referer())
	if err != nil || ref.Host == "" {
		return false
	}
	return ref.Scheme+"://"+ref.Host == want
}
