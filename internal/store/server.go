package store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// PasswordEnv names the environment variable that supplies the ClickHouse password. The DSN may
// not carry one (it is a flag value, visible in process listings); PasswordFileEnv names a file
// holding it instead, for secrets mounted as files.
const (
	PasswordEnv     = "BURSAR_CLICKHOUSE_PASSWORD"
	PasswordFileEnv = "BURSAR_CLICKHOUSE_PASSWORD_FILE"
)

// server is the clickhouse-go/v2 engine.
type server struct {
	conn driver.Conn
	name string // redacted DSN
}

// OpenServer connects to a ClickHouse server and checks that it answers.
func OpenServer(ctx context.Context, sc ServerConfig) (Engine, error) {
	if err := applyServerSecrets(&sc, os.LookupEnv); err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(sc.Options)
	if err != nil {
		return nil, fmt.Errorf("opening ClickHouse %s: %w", sc.Redacted, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.Ping(pctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("reaching ClickHouse %s: %w (%s)", sc.Redacted, wrapServerError(err), reachHint(err, sc.TLS))
	}
	return &server{conn: conn, name: sc.Redacted}, nil
}

func (s *server) Exec(ctx context.Context, query string, data []byte) error {
	if data != nil {
		var b strings.Builder
		b.Grow(len(query) + 1 + len(data))
		b.WriteString(query)
		b.WriteByte('\n')
		b.Write(data)
		query = b.String()
	}
	return wrapServerError(s.conn.Exec(ctx, query))
}

// Query wraps the statement so the server formats each row as JSON, which is what the embedded
// engine returns with FORMAT JSONEachRow, under the same readOnlySettings: the server refuses
// writes and table functions even for a user allowed them.
func (s *server) Query(ctx context.Context, query string) ([]byte, error) {
	rows, err := s.conn.Query(ctx, "SELECT formatRowNoNewline('JSONEachRow', *) FROM (\n"+query+"\n) "+readOnlySettings)
	if err != nil {
		return nil, wrapServerError(err)
	}
	defer rows.Close()
	var out []byte
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, wrapServerError(err)
		}
		out = append(append(out, line...), '\n')
	}
	return out, wrapServerError(rows.Err())
}

func (s *server) Close() error { return s.conn.Close() }

func wrapServerError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, clickhouse.ErrAcquireConnTimeout) || errors.Is(err, sqldriver.ErrBadConn) {
		return errors.Join(ErrUnavailable, err)
	}
	return wrapEngineError(err)
}

// The environment variables that name the TLS files when the DSN's tls_ca, tls_cert and tls_key
// parameters do not: a private CA for the server's certificate, and a client certificate and key
// for servers that authenticate clients by certificate.
const (
	TLSCAEnv   = "BURSAR_CLICKHOUSE_TLS_CA"
	TLSCertEnv = "BURSAR_CLICKHOUSE_TLS_CERT"
	TLSKeyEnv  = "BURSAR_CLICKHOUSE_TLS_KEY"
)

// TLSFiles are the PEM files of a TLS connection to ClickHouse, each with where it was named
// (a DSN parameter or an environment variable) so that an error can say what to change.
type TLSFiles struct {
	CA, Cert, Key             string
	caFrom, certFrom, keyFrom string
}

// lookupEnv is os.LookupEnv, passed in so tests set variables without touching the process.
type lookupEnv func(string) (string, bool)

// applyServerSecrets fills in what the DSN leaves to the environment: the password
// (PasswordEnv or the file PasswordFileEnv names) and the TLS files, then builds the TLS config.
func applyServerSecrets(sc *ServerConfig, env lookupEnv) error {
	pw, err := serverPassword(env)
	if err != nil {
		return err
	}
	sc.Options.Auth.Password = pw
	sc.TLS.fillFromEnv(env)
	if sc.TLS.CA == "" && sc.TLS.Cert == "" && sc.TLS.Key == "" {
		return nil
	}
	if sc.Options.Protocol == clickhouse.HTTP && sc.Options.TLS == nil {
		return fmt.Errorf("ClickHouse %s: TLS files given for plain http://: use https://...?secure=true", sc.Redacted)
	}
	if sc.Options.TLS != nil && sc.Options.TLS.InsecureSkipVerify {
		return fmt.Errorf("ClickHouse %s: skip_verify=true ignores the CA in %s: drop one of them", sc.Redacted, sc.TLS.caFrom)
	}
	cfg, err := sc.TLS.config(sc.Options.TLS)
	if err != nil {
		return fmt.Errorf("ClickHouse %s: %w", sc.Redacted, err)
	}
	sc.Options.TLS = cfg
	return nil
}

// serverPassword reads the password from PasswordEnv or from the file PasswordFileEnv names
// (one trailing newline dropped). Errors name the variable and the file, never the password.
func serverPassword(env lookupEnv) (string, error) {
	pw, hasPW := env(PasswordEnv)
	file, hasFile := env(PasswordFileEnv)
	switch {
	case hasPW && hasFile && pw != "" && file != "":
		return "", fmt.Errorf("both %s and %s are set: unset one", PasswordEnv, PasswordFileEnv)
	case file == "":
		return pw, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading the ClickHouse password from %s (%s): %w", file, PasswordFileEnv, errors.Unwrap(err))
	}
	pw = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if pw == "" {
		return "", fmt.Errorf("ClickHouse password file %s (%s) is empty", file, PasswordFileEnv)
	}
	return pw, nil
}

func (f *TLSFiles) fillFromEnv(env lookupEnv) {
	fill := func(path, from *string, name string) {
		if *path != "" {
			return
		}
		if v, ok := env(name); ok && v != "" {
			*path, *from = v, name
		}
	}
	fill(&f.CA, &f.caFrom, TLSCAEnv)
	fill(&f.Cert, &f.certFrom, TLSCertEnv)
	fill(&f.Key, &f.keyFrom, TLSKeyEnv)
}

// config returns base (the DSN's secure, tls_server_name) with the CA as the only roots and the
// client certificate, if any, presented to the server.
func (f *TLSFiles) config(base *tls.Config) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		cfg = base.Clone()
		cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS12)
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, fmt.Errorf("a client certificate needs both a cert and a key: set %s and %s (or tls_cert and tls_key in the DSN)",
			TLSCertEnv, TLSKeyEnv)
	}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("reading the CA %s (%s): %w", f.CA, f.caFrom, errors.Unwrap(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA %s (%s) holds no PEM certificate", f.CA, f.caFrom)
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("loading the client certificate %s (%s) and key %s (%s): %w", f.Cert, f.certFrom, f.Key, f.keyFrom, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// reachHint says what to check when the first ping fails: the CA when the server's certificate
// did not verify, else the address and user.
func reachHint(err error, f TLSFiles) string {
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknown) || errors.As(err, &verify) {
		if f.CA == "" {
			return fmt.Sprintf("the server's certificate did not verify against the system roots: name its CA in %s or the DSN's tls_ca", TLSCAEnv)
		}
		return fmt.Sprintf("the server's certificate did not verify against the CA %s (%s): check it is the CA that signed the server's certificate and that the DSN's host is in it", f.CA, f.caFrom)
	}
	return "check the server is up and the DSN's host, port, user and TLS settings"
}
