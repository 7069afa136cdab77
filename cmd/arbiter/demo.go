package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/console"
	"github.com/bursar-dev/bursar/internal/demo"
	"github.com/bursar-dev/bursar/internal/slack"
)

type demoOptions struct {
	dir    string
	length time.Duration
}

// newDemoCmd is `arbiter demo`: the whole system on embedded defaults, replaying a real spot trace
// at accelerated time, then the report. internal/demo does the work.
func newDemoCmd(g *cli.Globals) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Replay a real spot trace through the whole system on embedded defaults and print the report",
		Long: `demo starts embedded NATS and ClickHouse under a fresh data directory, publishes catalog prices,
and replays a real spot-capacity trace on a virtual clock, a trace minute at a time and as fast as the
CPU allows, so two runs print the same figures: a simulated fleet loses spot instances
when a zone's capacity falls, the arbiter replaces them (the same code as "arbiter run"), the
ready replicas serve each workload's demand (a real per-minute demand trace) at their GPU type's
rate and report tokens, and the recorder writes every event to ClickHouse. At the end it prints
cost, availability, the share of minutes with enough capacity, reclaims, cost per million tokens
and savings against on-demand per workload and location, cost per million tokens by GPU type,
and writes a markdown report with PNG charts under the data directory.

What it replays lives in --dir (see its README.md): bursar.yaml, prices/, trace/ and load/.`,
		Example: `  arbiter demo                              # examples/demo, seconds
  arbiter demo --length 3h                  # a shorter run
  arbiter demo --data-dir /tmp/bursar-demo`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dataDir := g.DataDir
			if f := cmd.Flag("data-dir"); f == nil || !f.Changed {
				dataDir = filepath.Join(g.DataDir, "demo-"+time.Now().UTC().Format("20060102-150405"))
			}
			if f := cmd.Flag("log-level"); f == nil || !f.Changed {
				g.LogLevel = "error" // keep the progress bar readable
			}
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if g.NATS != "" || g.ClickHouse != "" {
				return fmt.Errorf("demo runs on embedded NATS and ClickHouse only: drop --nats and --clickhouse")
			}
			sc, err := slack.ConfigFromEnv(os.LookupEnv) // alerts post only with Slack configured
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "demo: data under %s\n", dataDir)
			res, err := demo.Run(cmd.Context(), demo.Options{Dir: o.dir, DataDir: dataDir, Length: o.length,
				Slack: sc, Progress: cli.ProgressWriter(cmd.ErrOrStderr()), Log: log})
			if err != nil {
				return err
			}
			if err := res.Print(cmd.OutOrStdout()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\nTo look at what the demo did in the web console (fleet, decisions and their causes, costs):\n  %s\n",
				consoleCommand(dataDir, filepath.Join(o.dir, "bursar.yaml")))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "examples/demo", "what to replay: bursar.yaml, prices/*.csv, trace/<location>.json, load/<workload>.csv")
	f.DurationVar(&o.length, "length", 0, "trace time to replay (default: the whole trace, about 10h45m)")
	return cmd
}

// consoleCommand is the command that serves the console on the demo's history: report console,
// from beside this binary when it is there (make build puts both in bin/).
func consoleCommand(dataDir, fleet string) string {
	bin := "report"
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "report"); fileExists(p) {
			bin = p
			if wd, err := os.Getwd(); err == nil {
				if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
					bin = "./" + rel
				}
			}
		}
	}
	return fmt.Sprintf("%s console --data-dir %s --fleet %s    # then open http://%s/", bin, dataDir, fleet, console.DefaultReportListen)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
