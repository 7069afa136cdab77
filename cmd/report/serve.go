package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
	islack "github.com/bursar-dev/bursar/internal/slack"
)

// newServeCmd is `report serve`: named reports on a cron schedule, posted to Slack.
func newServeCmd(g *cli.Globals) *cobra.Command {
	var schedule, reports, period, by, fleetFile string
	var once bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run reports on a cron schedule and post them to Slack with their charts",
		Long: `serve runs the named reports on a cron schedule (five fields, UTC) over the --period before each
run, and posts each to Slack with its chart attached. Slack comes from the environment:
BURSAR_SLACK_CHANNEL and BURSAR_SLACK_BOT_TOKEN (or BURSAR_SLACK_BOT_TOKEN_FILE), a bot with
chat:write and files:write. --once runs the reports now and prints them instead of posting.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			byDims, err := report.ParseDims(by)
			if err != nil {
				return err
			}
			fl, err := loadFleet(fleetFile, false)
			if err != nil {
				return err
			}
			names := strings.Split(reports, ",")
			s := &report.Scheduler{Schedule: schedule, Reports: names, Out: cmd.OutOrStdout(), Log: log,
				Run: func(ctx context.Context, name string, now time.Time) (*report.Result, error) {
					w, err := report.ParseWindow("", "", period, now)
					if err != nil {
						return nil, err
					}
					q, closeFn, err := open(ctx, cmd, g)
					if err != nil {
						return nil, err
					}
					defer closeFn()
					return report.RunNamed(ctx, q, name, report.Options{Window: w, By: byDims, Now: now, Fleet: fl})
				}}
			if _, err := s.Parse(time.Now()); err != nil {
				return err
			}
			if once {
				return s.Once(cmd.Context(), time.Now().UTC())
			}
			if s.Poster, err = slackFromEnv(); err != nil {
				return err
			}
			return s.Start(cmd.Context(), func() time.Time { return time.Now().UTC() })
		},
	}
	f := cmd.Flags()
	f.StringVar(&schedule, "schedule", "0 9 * * MON", "cron schedule, five fields, UTC")
	f.StringVar(&reports, "report", "cost,savings", "reports to run: "+strings.Join(report.Named, ", "))
	f.StringVar(&period, "period", report.DefaultPeriod, "window each run covers, ending at the run")
	f.StringVar(&by, "by", "workload", "group by (see report cost --by)")
	f.StringVar(&fleetFile, "fleet", "bursar.yaml", "fleet file (savings needs it)")
	f.BoolVar(&once, "once", false, "run the reports now and print them instead of posting (a dry run)")
	return cmd
}

// slackFromEnv builds the poster from the BURSAR_SLACK_* variables internal/slack reads (secrets
// never come from flags). BURSAR_SLACK_API_URL points it at a stand-in for slack.com/api.
func slackFromEnv() (*islack.ReportPoster, error) {
	cfg, err := islack.ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	cfg.APIURL = os.Getenv("BURSAR_SLACK_API_URL")
	p, err := islack.NewReportPoster(cfg)
	if err != nil {
		return nil, fmt.Errorf("report serve posts to Slack: %w; or use --once to print", err)
	}
	return p, nil
}
