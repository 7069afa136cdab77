package report

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/chdb"
)

// Source says where reports read the history.
type Source struct {
	DSN     string // a ClickHouse server; empty: the embedded store under DataDir
	DataDir string
	NATSURL string        // where the embedded store's owner answers queries
	NATS    []nats.Option // credentials and TLS for NATSURL (cli.Globals.NATSOptions)
	// Verify, when set, judges the server once connected (cli.Globals.CheckServerAuth): its
	// error is returned as it is, with no fallback to the store, since a server that is refused
	// must not be mistaken for one that is not there.
	Verify func(*nats.Conn) error
	Log    *slog.Logger
}

// Open returns what runs reports on the history and a function that releases it; it reads an existing
// store and never creates or migrates one. With a server DSN it opens the server. Otherwise it
// asks the embedded store's owner over NATS to run them, and opens the embedded store itself only when
// nobody answers; when the store turns out to be owned by a process that does not answer, the
// error names it and says what to check.
func Open(ctx context.Context, src Source) (Reporter, func() error, error) {
	if src.Log == nil {
		src.Log = slog.New(slog.DiscardHandler)
	}
	if src.DSN != "" {
		st, err := store.Open(ctx, store.Config{DSN: src.DSN, Owner: "report", ReadOnly: true, Log: src.Log})
		if err != nil {
			return nil, nil, err
		}
		return Local{st}, st.Close, nil
	}
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	nc, _, nerr := bus.Connect(dctx, src.NATSURL, "report", src.Log, src.NATS...)
	if nerr == nil && src.Verify != nil {
		if err := src.Verify(nc); err != nil {
			nc.Close()
			return nil, nil, err
		}
	}
	if nerr == nil {
		c, err := Dial(dctx, nc)
		if err == nil {
			src.Log.Debug("reading the history through its owner", "owner", c.Owner())
			return c, func() error { nc.Close(); return nil }, nil
		}
		nc.Close()
		nerr = err
	}
	st, err := store.Open(ctx, store.Config{DataDir: src.DataDir, Owner: "report", ReadOnly: true, Log: src.Log})
	if err != nil {
		return nil, nil, explainOwned(err, src.NATSURL, nerr)
	}
	return Local{st}, st.Close, nil
}

// explainOwned adds to an error saying the store is owned that its owner did not answer, and
// what to check.
func explainOwned(err error, natsURL string, nerr error) error {
	var owned *chdb.OwnedError
	if !errors.As(err, &owned) {
		return err
	}
	return fmt.Errorf("%w\nreport asked it over NATS at %s (subject %s) and got no answer (%v): "+
		"point --nats at the NATS that process uses, or pass --clickhouse for a server",
		err, bus.Redact(natsURL), QuerySubject, nerr)
}
