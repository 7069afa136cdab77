package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/oklog/run"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/console"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/health"
	"github.com/bursar-dev/bursar/internal/report"
	islack "github.com/bursar-dev/bursar/internal/slack"
)

// serveOptions are report serve's flags.
type serveOptions struct {
	schedule, reports, period, by, fleetFile string
	metricsListen                            string
	once, dryRun                             bool
	console                                  console.Access
}

// newServeCmd is `report serve`: named reports on a cron schedule, posted to Slack. --once posts
// them once and exits, which is what a Kubernetes CronJob runs; --dry-run prints instead.
func newServeCmd(g *cli.Globals) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run reports on a cron schedule and post them to Slack with their charts",
		Long: `serve runs the named reports on a cron schedule (five fields, UTC) over the --period before each
run, and posts each to Slack with its chart attached. Slack comes from the environment:
BURSAR_SLACK_CHANNEL and BURSAR_SLACK_BOT_TOKEN (or BURSAR_SLACK_BOT_TOKEN_FILE), a bot with
chat:write and files:write. With neither set, Slack is left out: serve runs and posts no report,
says so once in its log, and keeps its endpoints up (a Deployment of it stays healthy); one
without the other is refused.

--once runs the reports now, posts them and exits (non-zero when one failed): run it from a
scheduler of your own, such as a Kubernetes CronJob, instead of keeping serve up. --dry-run runs
them now and prints what would be posted, without Slack.

On its schedule, serve answers /metrics, /livez and /readyz on --metrics-listen; it is ready
while the history its reports read can be opened. With --console-listen it also serves the web
console (docs/console.md) on that history, read-only, as report console does.`,
		Example: `  report serve --schedule "0 9 * * MON" --report cost,savings,tokens --period 7d --fleet bursar.yaml
  report serve --once --report cost,savings --period 7d     # one run, posted: a CronJob's command
  report serve --dry-run --report cost,idle                 # run now and print instead of posting`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.schedule, "schedule", "0 9 * * MON", "cron schedule, five fields, UTC")
	f.StringVar(&o.reports, "report", "cost,savings", "reports to run: "+strings.Join(report.Named, ", "))
	f.StringVar(&o.period, "period", report.DefaultPeriod, "window each run covers, ending at the run")
	f.StringVar(&o.by, "by", "", "group every report by (see report cost --by); default: each report's own")
	f.StringVar(&o.fleetFile, "fleet", "bursar.yaml", "fleet file (savings needs it)")
	f.BoolVar(&o.once, "once", false, "run the reports now, post them to Slack and exit (for a CronJob)")
	f.BoolVar(&o.dryRun, "dry-run", false, "run the reports now and print what would be posted; needs no Slack")
	console.BindFlags(f, &o.console, "")
	f.StringVar(&o.metricsListen, "metrics-listen", "127.0.0.1:9466", "address of the Prometheus /metrics endpoint and the /livez and /readyz probes while serve runs on its schedule; empty to disable")
	return cmd
}

// runServe checks every flag and Slack's settings before it reads any history, then runs the
// reports once (--once, --dry-run) or on the schedule.
func runServe(cmd *cobra.Command, g *cli.Globals, o serveOptions) error {
	log, err := g.Logger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	by := map[string][]report.Dim{}
	for _, name := range strings.Split(o.reports, ",") {
		s := defaultBy[name]
		if cmd.Flags().Changed("by") {
			s = o.by
		}
		if by[name], err = report.ParseDims(s); err != nil {
			return err
		}
	}
	if err := o.console.Check(); err != nil {
		return err
	}
	fl, err := loadFleet(o.fleetFile, false)
	if err != nil {
		return err
	}
	s := &report.Scheduler{Schedule: o.schedule, Reports: strings.Split(o.reports, ","), Out: cmd.OutOrStdout(), Log: log,
		Run: func(ctx context.Context, name string, now time.Time) (*report.Result, error) {
			w, err := report.ParseWindow("", "", o.period, now)
			if err != nil {
				return nil, err
			}
			r, closeFn, err := open(ctx, cmd, g)
			if err != nil {
				return nil, err
			}
			defer closeFn()
			return r.Run(ctx, report.NewRequest(name, report.Options{Window: w, By: by[name], Now: now, Fleet: fl}))
		}}
	if _, err := s.Parse(time.Now()); err != nil {
		return err
	}
	if !o.once && !o.dryRun && slackLeftOut() {
		log.Warn("report serve: no Slack configured (BURSAR_SLACK_BOT_TOKEN_FILE and BURSAR_SLACK_CHANNEL are unset), so the schedule " +
			"runs and posts no report; serving /metrics, /livez and /readyz (and the console, with --console-listen) only. " +
			"Set both to post reports on the schedule; run a report by hand with \"report cost\" and the like")
		s = nil
	} else if !o.dryRun {
		if s.Poster, err = slackFromEnv(); err != nil {
			return err
		}
	}
	if o.once || o.dryRun {
		return s.Once(cmd.Context(), time.Now().UTC())
	}
	if s != nil {
		if err := checkSlackToken(cmd.Context(), log); err != nil {
			return err
		}
	}
	return schedule(cmd, g, s, o, fl, log)
}

// slackLeftOut reports whether Slack is left out altogether: neither a bot token nor a
// channel. Slack is optional, so serve then keeps its endpoints up with nothing scheduled,
// rather than exit and have a Deployment restart it forever; a half-configured Slack (one of
// the two) is still an error, since it is a mistake and not a choice.
func slackLeftOut() bool {
	for _, name := range []string{"BURSAR_SLACK_BOT_TOKEN", "BURSAR_SLACK_BOT_TOKEN_FILE", "BURSAR_SLACK_CHANNEL"} {
		if os.Getenv(name) != "" {
			return false
		}
	}
	return true
}

// schedule runs s on its schedule beside the probes and metrics endpoint; a nil s schedules
// nothing (Slack left out). Ready means the reports' history can be opened now (its owner
// answers over NATS, or the store opens), which is what the next run will need.
func schedule(cmd *cobra.Command, g *cli.Globals, s *report.Scheduler, o serveOptions, fl *fleet.Config, log *slog.Logger) error {
	reg := cli.NewRegistry()
	metrics := report.NewServeMetrics(reg)
	history := health.Check{Name: "history", Run: func(ctx context.Context) error {
		_, closeFn, err := open(ctx, cmd, g)
		if err != nil {
			return err
		}
		return closeFn()
	}}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	var group run.Group
	group.Add(func() error { return health.Serve(ctx, o.metricsListen, reg, []health.Check{history}, log) }, func(error) { cancel() })
	if o.console.Addr != "" {
		serve, closeFn, err := consolePart(ctx, cmd, g, o.console, fl)
		if err != nil {
			return err
		}
		defer closeFn()
		group.Add(func() error { return serve(ctx) }, func(error) { cancel() })
	}
	if s != nil {
		s.Metrics = metrics
		group.Add(func() error { return s.Start(ctx, func() time.Time { return time.Now().UTC() }) }, func(error) { cancel() })
	} else {
		group.Add(func() error { <-ctx.Done(); return nil }, func(error) { cancel() })
	}
	return group.Run()
}

// checkSlackToken asks Slack (auth.test) whether the bot token works, so a wrong token stops
// "report serve" at start rather than at its first scheduled run, days later.
func checkSlackToken(ctx context.Context, log *slog.Logger) error {
	cfg, err := islack.ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return err
	}
	api, _ := islack.Config{BotToken: cfg.BotToken, APIURL: cfg.APIURL}.Client()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	who, err := api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("report serve: Slack refused the bot token (auth.test: %w): check BURSAR_SLACK_BOT_TOKEN_FILE "+
			"(or BURSAR_SLACK_BOT_TOKEN) holds the bot token of the app installed in the workspace; or use --dry-run to print", err)
	}
	log.Info("slack bot token checked", "team", who.Team, "bot", who.User)
	return nil
}

// slackFromEnv builds the poster from the BURSAR_SLACK_* variables internal/slack reads (secrets
// never come from flags).
func slackFromEnv() (*islack.ReportPoster, error) {
	cfg, err := islack.ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	p, err := islack.NewReportPoster(cfg)
	if err != nil {
		return nil, fmt.Errorf("report serve posts to Slack: %w; or use --dry-run to print", err)
	}
	return p, nil
}
