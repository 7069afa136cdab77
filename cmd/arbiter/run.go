package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/oklog/run"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
)

type runOptions struct {
	listen        string
	metricsListen string
}

func newRunCmd(g *cli.Globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the arbiter (and, with no --nats, an embedded NATS server)",
		Example: `  arbiter run                                  # embedded NATS on 127.0.0.1:4222, data in ./bursar-data
  arbiter run --listen 0.0.0.0:4222 --data-dir /var/lib/bursar
  arbiter run --nats nats://nats-1:4222,nats://nats-2:4222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runArbiter(cmd.Context(), g, o, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server (only without --nats)")
	f.StringVar(&o.metricsListen, "metrics-listen", "127.0.0.1:9464", "address of the Prometheus /metrics endpoint; empty to disable")
	return cmd
}

func runArbiter(ctx context.Context, g *cli.Globals, o runOptions, log *slog.Logger) error {
	url := g.NATS
	if url == "" {
		host, port, err := splitListen(o.listen)
		if err != nil {
			return err
		}
		storeDir := filepath.Join(g.DataDir, "nats")
		ns, err := bus.StartEmbedded(bus.EmbeddedOptions{Host: host, Port: port, StoreDir: storeDir})
		if err != nil {
			return err
		}
		defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
		url = ns.ClientURL()
		log.Info("embedded NATS with JetStream is up", "url", url, "store", storeDir)
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	nc, js, err := bus.Connect(cctx, url, "arbiter", log)
	if err != nil {
		return err
	}
	defer nc.Drain() //nolint:errcheck // best effort at exit
	if err := bus.Ensure(cctx, js, bus.Options{}); err != nil {
		return err
	}
	reg := cli.NewRegistry()
	var group run.Group
	addContext(&group, ctx, func(ctx context.Context) error {
		return cli.ServeMetrics(ctx, o.metricsListen, reg, log)
	})
	log.Info("arbiter running; stop with Ctrl-C or SIGTERM")
	return group.Run()
}

// addContext adds a part that runs until its context is cancelled, to stop with the group.
func addContext(g *run.Group, parent context.Context, part func(context.Context) error) {
	ctx, cancel := context.WithCancel(parent)
	g.Add(func() error { return part(ctx) }, func(error) { cancel() })
}

func splitListen(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("--listen %q: want host:port, e.g. 127.0.0.1:4222", addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("--listen %q: bad port", addr)
	}
	return host, port, nil
}
