package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/oklog/run"

	"github.com/bursar-dev/bursar/internal/console"
)

// serveConsole adds the web console to group, on o.Access.Addr: its address is taken now, so a
// port in use or a refused address stops the start with a clear error. It serves nothing when
// the address is empty, or when there is no history to read (--no-history), which it says.
func serveConsole(group *run.Group, ctx context.Context, o console.Options, log *slog.Logger) error {
	if o.Access.Addr == "" {
		return nil
	}
	if o.Reports == nil {
		log.Info("no web console: it reads the history, which this arbiter does not record (--no-history); " +
			"run report serve --console-listen where the history is")
		return nil
	}
	o.Log = log
	srv, err := console.New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Access.Addr)
	if err != nil {
		return fmt.Errorf("--console-listen %s: %w", o.Access.Addr, err)
	}
	addContext(group, ctx, func(ctx context.Context) error { return srv.Serve(ctx, ln) })
	return nil
}
