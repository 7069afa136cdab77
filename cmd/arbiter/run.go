package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/kube"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/actuate/webhook"
	"github.com/bursar-dev/bursar/internal/alert"
	"github.com/bursar-dev/bursar/internal/anomalywatch"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/console"
	fleetfile "github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/health"
	"github.com/bursar-dev/bursar/internal/recorder"
	"github.com/bursar-dev/bursar/internal/report"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/system"
)

type runOptions struct {
	listen        string
	metricsListen string
	config        string
	identity      string
	leaseTTL      time.Duration
	replicas      int
	noHistory     bool
	ttlDays       int
	slackListen   string
	stale         alert.Thresholds
	console       console.Access
}

func newRunCmd(g *cli.Globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the arbiter (and, with no --nats, an embedded NATS server)",
		Example: `  arbiter run                                  # embedded NATS on 127.0.0.1:4222, data in ./bursar-data
  arbiter run --listen 0.0.0.0:4222 --nats-tls-cert /etc/bursar/nats.pem --nats-tls-key /etc/bursar/nats-key.pem --data-dir /var/lib/bursar
  arbiter run --nats nats://nats-1:4222,nats://nats-2:4222`,
		Long: `Run the arbiter: follow prices, reclaims and telemetry, plan, apply budgets and actions.

With BURSAR_SLACK_BOT_TOKEN[_FILE] and BURSAR_SLACK_CHANNEL set, the leading arbiter posts alerts to
the channel: reclaims handled (where, the replacement, the time from notice to ready) or not
handled by their deadline, actions that failed (once per action), price and telemetry sources gone
stale and back (once each), and budget thresholds. See docs/budgets.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkStale(o.stale); err != nil {
				return err
			}
			if err := o.console.Check(); err != nil { // before anything is opened
				return err
			}
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runArbiter(cmd.Context(), g, o, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server (only without --nats); an address other than loopback needs --nats-tls-cert and --nats-tls-key")
	f.StringVar(&o.metricsListen, "metrics-listen", "127.0.0.1:9464", "address of the Prometheus /metrics endpoint and the /livez and /readyz probes; empty to disable")
	f.StringVar(&o.config, "config", "", "the fleet file: locations, actuators and workloads (check it with \"arbiter config check FILE\"); default ./bursar.yaml if it exists, else run without placement (NATS and history only)")
	f.BoolVar(&o.noHistory, "no-history", false, "do not record events into ClickHouse (run \"arbiter record\" elsewhere)")
	f.IntVar(&o.ttlDays, "telemetry-ttl-days", store.DefaultTelemetryTTLDays, "days raw GPU and token samples are kept (applies when the tables are created)")
	f.StringVar(&o.identity, "identity", "", "this arbiter's name in the leader lease (default hostname-pid); a restart under the same name takes its lease back at once")
	f.StringVar(&o.slackListen, "slack-listen", "", "address of the HTTP endpoint Slack posts approval clicks to (POST /slack/interactions); needs BURSAR_SLACK_SIGNING_SECRET[_FILE]. Without it, BURSAR_SLACK_APP_TOKEN[_FILE] selects Socket Mode")
	f.IntVar(&o.replicas, "stream-replicas", 1, "JetStream replicas of Bursar's streams and KV buckets (the leader lease among them): 3 on a NATS cluster, so they outlive a server")
	f.DurationVar(&o.leaseTTL, "lease-ttl", 10*time.Second, "leader lease lifetime: a standby takes over this long after the leader dies")
	f.DurationVar(&o.stale.Prices, "stale-prices", alert.DefaultPriceStale, "Slack alert when a price source (per source and provider) publishes nothing for this long. "+
		"The collector publishes only changed prices, and every offer at its snapshot (collector.yaml snapshot, default every 6h): keep this above the snapshot interval. 0 turns the alert off")
	f.DurationVar(&o.stale.Telemetry, "stale-telemetry", alert.DefaultTelemetryStale, "Slack alert when a location's GPU samples or token counters stop for this long; 0 turns the alert off")
	console.BindFlags(f, &o.console, console.DefaultArbiterListen)
	f.Float64Var(&o.stale.Fill, "stream-fill-alert", bus.DefaultFillAlert, "Slack alert when a stream or bucket holds this share of its byte limit (metric bursar_stream_fill_ratio); 0 turns the alert off")
	return cmd
}

func runArbiter(ctx context.Context, g *cli.Globals, o runOptions, log *slog.Logger) error {
	cfg, err := loadFleet(o.config, log)
	if err != nil {
		return err
	}
	reg := cli.NewRegistry()
	io, err := infraOptions(g, o, reg, log)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if g.NATS != "" {
		nc, js, err := g.Dial(cctx, "", bus.RoleArbiter, "arbiter", log)
		if err != nil {
			return err
		}
		defer nc.Drain() //nolint:errcheck // best effort at exit
		io.Conn, io.JS = nc, js
	}
	inf, err := system.OpenInfra(cctx, io)
	if errors.Is(err, system.ErrStreams) {
		return fmt.Errorf("%w (with --stream-replicas %d: a NATS cluster needs at least that many JetStream servers)", err, o.replicas)
	}
	if err != nil {
		return err
	}
	defer inf.Close()
	reg.MustRegister(bus.NewFillCollector(inf.JS))
	var group run.Group
	web := console.Options{Access: o.console}
	web.Access.DataDir = g.DataDir
	web.AnomalyAnswers = func(ctx context.Context) (map[string]string, error) {
		kv, err := inf.JS.KeyValue(ctx, bus.BucketAnomalyAnswers)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", bus.BucketAnomalyAnswers, err)
		}
		return anomalywatch.Words(ctx, kv)
	}
	checks := []health.Check{health.NATS(inf.Conn), health.Streams(inf.JS, bus.Market, bus.Telemetry, bus.Fleet)}
	if st := inf.Store; st != nil {
		checks = append(checks, health.Store(st), health.Recorder(reg, health.RecorderGrace, time.Now))
		web.Reports = report.Local{Q: st}
		addContext(&group, ctx, inf.Recorder.Run)
		if g.ClickHouse == "" { // this process owns the embedded store: answer report's queries
			addContext(&group, ctx, func(ctx context.Context) error {
				return report.Serve(ctx, inf.Conn, st, "arbiter run", log)
			})
		}
	}
	sc, err := slack.ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return err
	}
	if cfg == nil { // no fleet, no lease: this arbiter alone posts alerts and writes budgets
		addContext(&group, ctx, func(ctx context.Context) error { return answerBudgetWrites(ctx, inf.Conn, inf.JS, log) })
		part, err := system.Alerts(system.AlertOptions{JS: inf.JS, Slack: sc, Stale: o.stale, Registry: reg, Log: log})
		if err != nil {
			return err
		}
		if part != nil {
			addContext(&group, ctx, part)
		}
	} else {
		acts, err := actuators(cfg, log)
		if err != nil {
			return err
		}
		so := system.Options{Arbiter: arbiter.Options{Config: cfg, Actuator: acts, Log: log,
			Registry: reg, Identity: o.identity, LeaseTTL: o.leaseTTL}, Slack: sc, SlackListen: o.slackListen, Stale: o.stale}
		if inf.Store != nil {
			so.History = inf.Store // the anomaly detectors warm from the recorded spend
		}
		sys, err := inf.System(cctx, so)
		if err != nil {
			return err
		}
		reg.MustRegister(system.SpendMetrics(sys.Budgets))
		web.Fleet, web.Policies, web.Approvals = cfg, sys.Budgets.Policies, sys.Approvals()
		addContext(&group, ctx, sys.Run)
		checks = append(checks, health.Check{Name: "arbiter", Run: sys.Ready})
	}
	addContext(&group, ctx, func(ctx context.Context) error {
		return health.Serve(ctx, o.metricsListen, reg, checks, log)
	})
	if err := serveConsole(&group, ctx, web, log); err != nil {
		return err
	}
	log.Info("arbiter running; stop with Ctrl-C or SIGTERM")
	return group.Run()
}

// infraOptions is what the flags select to run on: --nats (dialled by the caller) or the embedded
// server on --listen under --data-dir, and the history (--clickhouse, or embedded under
// --data-dir) unless --no-history. A store under --data-dir takes the data dir first.
func infraOptions(g *cli.Globals, o runOptions, reg prometheus.Registerer, log *slog.Logger) (system.InfraOptions, error) {
	io := system.InfraOptions{Name: "arbiter", Log: log, Program: "arbiter run",
		Streams: bus.Options{LeaseTTL: o.leaseTTL, Replicas: o.replicas}}
	if g.NATS == "" {
		host, port, err := splitListen(o.listen)
		if err != nil {
			return io, err
		}
		io.Embedded = bus.EmbeddedOptions{Host: host, Port: port, StoreDir: g.NATSStoreDir(),
			TLSCert: g.Auth.TLSCert, TLSKey: g.Auth.TLSKey, Log: log}
	}
	if !o.noHistory {
		io.History = &system.HistoryOptions{Store: historyConfig(g, "arbiter run", o.ttlDays),
			Recorder: recorder.Config{Registerer: reg}}
	}
	if g.NATS == "" || !o.noHistory && g.ClickHouse == "" {
		io.LockDir = g.DataDir
	}
	return io, nil
}

// loadFleet reads the fleet file. With no --config it reads ./bursar.yaml when present and
// otherwise returns nil: the arbiter then serves NATS and records history but places nothing.
func loadFleet(path string, log *slog.Logger) (*fleetfile.Config, error) {
	if path == "" {
		if _, err := os.Stat("bursar.yaml"); err != nil {
			log.Warn("no fleet file (--config, or ./bursar.yaml): serving NATS and recording history, placing nothing",
				"example", "examples/bursar.yaml")
			return nil, nil
		}
		path = "bursar.yaml"
	}
	return fleetfile.Load(path)
}

// actuators builds each location's actuator from the fleet file. Kubernetes locations share one
// actuator holding a client per kube context; sim locations share one in-process fleet (its Router).
func actuators(cfg *fleetfile.Config, log *slog.Logger) (actuate.Router, error) {
	r := sim.New(cfg, func() time.Time { return time.Now().UTC() }).Router()
	if len(r) > 0 {
		log.Warn("some locations use the sim actuator: their replicas are simulated, not real")
	}
	var k *kube.Actuator
	for _, l := range cfg.Locations {
		a := l.Actuator
		switch a.Kind {
		case fleetfile.KindKubernetes:
			if k == nil {
				var err error
				if k, err = kube.Connect(cfg); err != nil {
					return nil, err
				}
			}
			r[l.Name] = k
		case fleetfile.KindWebhook:
			secret, err := l.WebhookSecret(os.LookupEnv)
			if err != nil {
				return nil, err
			}
			r[l.Name] = &webhook.Hook{URL: a.URL, Secret: secret, Timeout: a.Timeout, Retries: a.Retries}
		}
	}
	return r, nil
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

// checkStale refuses negative thresholds; 0 is how a check is turned off.
func checkStale(th alert.Thresholds) error {
	if th.Prices < 0 {
		return fmt.Errorf("--stale-prices %s: must be 0 (off) or more, e.g. 7h", th.Prices)
	}
	if th.Telemetry < 0 {
		return fmt.Errorf("--stale-telemetry %s: must be 0 (off) or more, e.g. 2m", th.Telemetry)
	}
	if th.Fill < 0 || th.Fill > 1 {
		return fmt.Errorf("--stream-fill-alert %g: must be 0 (off) or a share of the limit up to 1, e.g. 0.8", th.Fill)
	}
	return nil
}
