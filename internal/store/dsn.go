package store

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// ServerConfig is a parsed --clickhouse DSN.
type ServerConfig struct {
	Options  *clickhouse.Options
	Database string
	Cluster  string // from ?cluster=: create Replicated tables ON CLUSTER
	// TLS names the CA and client certificate files, from the DSN's tls_ca, tls_cert and tls_key
	// (OpenServer fills the rest from TLSCAEnv, TLSCertEnv and TLSKeyEnv).
	TLS TLSFiles
	// Redacted is the DSN with any password replaced, for logs and errors.
	Redacted string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseDSN parses a ClickHouse server DSN:
//
//	clickhouse://user@host:9440[,host2:9440]/database?cluster=name&secure=true&tls_ca=/etc/ca.pem&dial_timeout=5s
//
// Schemes clickhouse:// and tcp:// use the native protocol, http:// and https:// the HTTP
// interface. The path names the database (default "bursar"). cluster, tls_ca, tls_cert and
// tls_key are Bursar's own parameters; every other is clickhouse-go's (timeouts, secure,
// compression) or a ClickHouse setting. A password in the DSN is refused: the DSN is a flag value,
// visible in process listings, so the password comes from PasswordEnv or PasswordFileEnv.
// Errors never contain the password.
func ParseDSN(dsn string) (ServerConfig, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return ServerConfig{}, fmt.Errorf("parsing --clickhouse DSN: not a URL (want clickhouse://user@host:9000/bursar)")
	}
	red := u.Redacted()
	bad := func(format string, args ...any) (ServerConfig, error) {
		return ServerConfig{}, fmt.Errorf("parsing --clickhouse DSN %s: %s", red, fmt.Sprintf(format, args...))
	}
	switch u.Scheme {
	case "clickhouse", "tcp", "http", "https":
	default:
		return bad("scheme %q is not one of clickhouse, tcp, http, https", u.Scheme)
	}
	if u.Host == "" {
		return bad("no host (want clickhouse://user@host:9000/bursar)")
	}
	if _, ok := u.User.Password(); ok {
		return bad("the DSN carries a password, which shows in process listings: drop it and set %s, or %s to a file holding it",
			PasswordEnv, PasswordFileEnv)
	}
	for _, h := range strings.Split(u.Host, ",") {
		if err := checkHostPort(h); err != nil {
			return bad("%v", err)
		}
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		db = DefaultDatabase
	}
	if !identRE.MatchString(db) {
		return bad("database %q must be letters, digits and underscores", db)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("options: %v", redactSecret(err.Error(), u))
	}
	cluster := q.Get("cluster")
	if cluster != "" && !identRE.MatchString(cluster) {
		return bad("cluster %q must be letters, digits and underscores", cluster)
	}
	q.Del("cluster")
	files := TLSFiles{CA: q.Get("tls_ca"), Cert: q.Get("tls_cert"), Key: q.Get("tls_key"),
		caFrom: "the DSN's tls_ca", certFrom: "the DSN's tls_cert", keyFrom: "the DSN's tls_key"}
	for _, k := range []string{"tls_ca", "tls_cert", "tls_key"} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	u.Path = "/" + db
	opts, err := clickhouse.ParseDSN(u.String())
	if err != nil {
		return bad("%s", redactSecret(err.Error(), u))
	}
	if opts.Settings == nil {
		opts.Settings = clickhouse.Settings{}
	}
	opts.Settings["output_format_json_quote_64bit_integers"] = 0
	opts.Settings["output_format_json_escape_forward_slashes"] = 0
	return ServerConfig{Options: opts, Database: db, Cluster: cluster, TLS: files, Redacted: red}, nil
}

func checkHostPort(h string) error {
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return fmt.Errorf("host %q has no port (native 9000/9440, HTTP 8123/8443)", h)
		}
		return fmt.Errorf("host %q: %v", h, err)
	}
	if host == "" {
		return fmt.Errorf("host %q has an empty name", h)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("host %q: port must be 1-65535", h)
	}
	return nil
}

// redactSecret removes the DSN's password from a message that may quote it.
func redactSecret(msg string, u *url.URL) string {
	if u.User == nil {
		return msg
	}
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
		msg = strings.ReplaceAll(msg, url.QueryEscape(p), "xxxxx")
	}
	return msg
}
