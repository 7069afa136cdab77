package store

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// PasswordEnv names the environment variable that supplies the ClickHouse password when the DSN
// carries none, so that it stays out of flags and process listings.
const PasswordEnv = "BURSAR_CLICKHOUSE_PASSWORD"

// server is the clickhouse-go/v2 engine.
type server struct {
	conn driver.Conn
	name string // redacted DSN
}

// OpenServer connects to a ClickHouse server and checks that it answers.
func OpenServer(ctx context.Context, sc ServerConfig) (Engine, error) {
	if sc.Options.Auth.Password == "" {
		sc.Options.Auth.Password = os.Getenv(PasswordEnv)
	}
	conn, err := clickhouse.Open(sc.Options)
	if err != nil {
		return nil, fmt.Errorf("opening ClickHouse %s: %w", sc.Redacted, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.Ping(pctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("reaching ClickHouse %s: %w (check the server is up and the DSN's host, port and user)",
			sc.Redacted, wrapServerError(err))
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
// engine returns with FORMAT JSONEachRow.
func (s *server) Query(ctx context.Context, query string) ([]byte, error) {
	rows, err := s.conn.Query(ctx, "SELECT formatRowNoNewline('JSONEachRow', *) FROM ("+query+")")
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
