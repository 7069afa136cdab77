package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/console"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// newConsoleCmd is `report console`: the web console on the recorded history, read-only, until
// interrupted. report serve --console-listen serves the same beside its schedule.
func newConsoleCmd(g *cli.Globals) *cobra.Command {
	var a console.Access
	var fleetFile string
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve the web console on the recorded history (read-only) until interrupted",
		Long: `console serves Bursar's web console (docs/console.md) on the history the global flags name: the
embedded store under --data-dir (or its owner over NATS), or a ClickHouse server (--clickhouse).
It shows the fleet, the decisions and their causes, the approvals, the budgets and the costs, as
the reports compute them. It decides nothing: approve held plans in the console of arbiter run,
or in Slack.`,
		Example: `  report console --data-dir bursar-data/demo-20261207-101500 --fleet examples/demo/bursar.yaml
  report console --clickhouse clickhouse://reader@ch-1:9000/bursar --console-listen 127.0.0.1:9471`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.Addr == "" {
				return fmt.Errorf("--console-listen: give an address, e.g. %s", console.DefaultReportListen)
			}
			if err := a.Check(); err != nil {
				return err
			}
			fl, err := loadFleet(fleetFile, false)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			serve, closeFn, err := consolePart(ctx, cmd, g, a, fl)
			if err != nil {
				return err
			}
			defer closeFn()
			fmt.Fprintf(cmd.ErrOrStderr(), "console on %s://%s/ (Ctrl-C to stop)\n", scheme(a), a.Addr)
			return serve(ctx)
		},
	}
	console.BindFlags(cmd.Flags(), &a, console.DefaultReportListen)
	cmd.Flags().StringVar(&fleetFile, "fleet", "bursar.yaml", "fleet file: teams, regions and serving rates the reports use")
	return cmd
}

// consolePart opens the history and builds a read-only console on it; serve runs it until ctx
// ends, and closeFn releases the history. The address is taken at once, so a port in use is an
// error here, not later.
func consolePart(ctx context.Context, cmd *cobra.Command, g *cli.Globals, a console.Access, fl *fleet.Config) (
	serve func(context.Context) error, closeFn func() error, err error) {
	log, err := g.Logger(cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, err
	}
	r, closeFn, err := open(ctx, cmd, g)
	if err != nil {
		return nil, nil, err
	}
	a.DataDir = g.DataDir
	answers := func(ctx context.Context) (map[string]string, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return readAnswers(ctx, g)
	}
	srv, err := console.New(console.Options{Reports: r, Fleet: fl, Policies: policies(ctx, cmd, g, log), Access: a, Log: log,
		AnomalyAnswers: answers})
	if err != nil {
		_ = closeFn()
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", a.Addr)
	if err != nil {
		_ = closeFn()
		return nil, nil, fmt.Errorf("--console-listen %s: %w", a.Addr, err)
	}
	return func(ctx context.Context) error { return srv.Serve(ctx, ln) }, closeFn, nil
}

// policies reads the budget policies from the bus once, for the budgets page; none when the bus
// cannot be reached, which it logs (the page then shows no policy).
func policies(ctx context.Context, cmd *cobra.Command, g *cli.Globals, log *slog.Logger) func() []budget.Policy {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ps, err := loadPolicies(ctx, cmd, g, "")
	if err != nil {
		log.Info("the console shows no budget policy: they are read from NATS, which is not reachable", "err", err)
	}
	return func() []budget.Policy { return ps }
}

func scheme(a console.Access) string {
	if a.TLSCert != "" {
		return "https"
	}
	return "http"
}
