package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/collect"
	"github.com/bursar-dev/bursar/internal/gpu"
	"github.com/bursar-dev/bursar/internal/health"
	"github.com/bursar-dev/bursar/internal/reclaim"
	"github.com/bursar-dev/bursar/internal/tokens"
)

type runOptions struct {
	config        string
	metricsListen string
}

// runDeps are the seams a test fills; the zero value is production.
type runDeps struct {
	openGPU func() (gpu.Reader, error) // nil: NVML
	dmiDir  string                     // "": /sys/class/dmi/id, where the machine's cloud is read
}

// newRunCmd is `collector run`: every source collector.yaml names, side by side, until SIGINT
// or SIGTERM.
func newRunCmd(g *cli.Globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the price sources, reclaim watchers, GPU telemetry and token scrapers of collector.yaml",
		Long: `run publishes everything collector.yaml configures until it is stopped with Ctrl-C or
SIGTERM: price sources on their cron schedules, spot reclaim watchers, NVML GPU telemetry and
token counters scraped from vLLM and TGI. A bad config stops it at start, naming the file, line
and field. Credentials come from the environment or files the config names, never from flags.
See examples/collector.yaml and docs/collector.md.`,
		Example: `  collector run --config collector.yaml
  collector run --config /etc/bursar/collector.yaml --nats nats://nats.bursar:4222 --log-format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runCollector(cmd.Context(), g, o, log, runDeps{})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "collector.yaml", "the collector config file; check it with \"collector config check FILE\"")
	f.StringVar(&o.metricsListen, "metrics-listen", "127.0.0.1:9465", "address of the Prometheus /metrics endpoint and the /livez and /readyz probes; empty to disable")
	return cmd
}

// part is one long-running piece of the collector.
type part struct {
	name string
	run  func(ctx context.Context) error
}

// runCollector loads the config, connects to NATS and runs every configured part with the
// metrics endpoint until ctx ends; then it waits for what was published to be acknowledged.
func runCollector(ctx context.Context, g *cli.Globals, o runOptions, log *slog.Logger, d runDeps) error {
	cfg, err := LoadConfig(o.config)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	nc, js, err := g.Dial(cctx, "", bus.RoleCollector, "collector", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := bus.Ready(cctx, js, bus.Market, bus.Telemetry); err != nil {
		return fmt.Errorf("NATS at %s: %w", bus.Redact(g.NATSURL()), err)
	}
	pub := bus.NewPublisher(js)
	reg := cli.NewRegistry()
	watchLosses(pub, reg, log)
	parts, err := cfg.parts(ctx, pub, log, reg, d)
	if err != nil {
		return fmt.Errorf("%s: %w", o.config, err)
	}
	var group run.Group
	checks := []health.Check{health.NATS(nc), health.Streams(js, bus.Market, bus.Telemetry)}
	add(&group, ctx, part{"health and metrics endpoint", func(ctx context.Context) error {
		return health.Serve(ctx, o.metricsListen, reg, checks, log)
	}})
	names := make([]string, len(parts))
	for i, p := range parts {
		add(&group, ctx, p)
		names[i] = p.name
	}
	log.Info("collector running; stop with Ctrl-C or SIGTERM", "config", o.config,
		"nats", bus.Redact(g.NATSURL()), "parts", names)
	err = group.Run()
	if ferr := flush(ctx, pub, nc); ferr != nil && err == nil {
		err = ferr
	}
	log.Info("collector stopped")
	return err
}

// watchLosses logs, as an error, and counts every loss of acknowledged messages pub sees.
func watchLosses(pub *bus.Publisher, reg prometheus.Registerer, log *slog.Logger) {
	losses := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_collector_stream_losses_total",
		Help: "Times a stream acknowledged a message with a sequence it had already acknowledged: it lost messages (a damaged replica)."},
		[]string{"stream"})
	reg.MustRegister(losses)
	pub.OnLost(func(l bus.Loss) {
		losses.WithLabelValues(l.Stream).Inc()
		log.Error(l.String(), "stream", l.Stream)
	})
}

// add puts p in the group with its own context, cancelled when the group stops. A part that
// returns on its own while the collector should still run is an error, so nothing goes quiet.
func add(g *run.Group, parent context.Context, p part) {
	ctx, cancel := context.WithCancel(parent)
	g.Add(func() error {
		err := p.run(ctx)
		if err == nil && ctx.Err() == nil {
			err = fmt.Errorf("%s stopped on its own", p.name)
		}
		return err
	}, func(error) { cancel() })
}

// flush waits, briefly, for every publish in flight to be acknowledged and for the connection's
// buffer to reach the server, so a stop loses nothing that was already sent.
func flush(ctx context.Context, pub *bus.Publisher, nc *nats.Conn) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := pub.Flush(fctx); err != nil {
		return fmt.Errorf("flushing publishes at stop: %w", err)
	}
	if err := nc.FlushWithContext(fctx); err != nil {
		return fmt.Errorf("flushing the NATS connection at stop: %w", err)
	}
	return nil
}

// parts builds every configured part. It does no network I/O besides loading cloud credential
// configuration; a part that cannot be built stops the start.
func (c Config) parts(ctx context.Context, pub *bus.Publisher, log *slog.Logger, reg prometheus.Registerer, d runDeps) ([]part, error) {
	var parts []part
	if c.Prices != nil && len(c.Prices.Sources) > 0 {
		jobs, err := c.Prices.Jobs(ctx)
		if err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
		col := collect.New(pub, log.With("part", "prices"), collect.NewMetrics(reg))
		snapshot := c.Prices.Snapshot
		parts = append(parts, part{"price sources", func(ctx context.Context) error { return col.Run(ctx, jobs, snapshot) }})
	}
	dir := d.dmiDir
	if dir == "" {
		dir = dmiDir
	}
	watchers := onInstanceWatchers(c.Watchers, detectCloud(dir), log)
	w, err := reclaim.New(ctx, watchers, reclaim.Deps{Publisher: pub, Logger: log.With("part", "reclaim"), Metrics: reclaim.NewMetrics(reg)})
	if err != nil {
		return nil, err
	}
	for _, r := range w.Runners() {
		parts = append(parts, part{watcherName(r), r.Run})
	}
	if c.GPU != nil {
		g, err := gpu.New(*c.GPU, gpu.Deps{Publisher: pub, Logger: log.With("part", "gpu"), Open: d.openGPU, Metrics: gpu.NewMetrics(reg)})
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{"gpu telemetry", g.Run})
	}
	if c.Scrape != nil && len(c.Scrape.Targets) > 0 {
		s, err := tokens.New(*c.Scrape, tokens.Deps{Publisher: pub, Logger: log.With("part", "tokens"), Metrics: tokens.NewMetrics(reg)})
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{"token scraper", s.Run})
	}
	return parts, nil
}
