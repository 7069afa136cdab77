// Command soak is Bursar's chaos rig: days of market on a 3-node NATS cluster with two arbiters,
// the recorder, seeded faults and a fake Slack approver, checked at the end. internal/soak does
// the work. It is a program of its own, not a command of arbiter, so that the programs Bursar
// ships link none of the rig's fakes and test helpers.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/soak"
	"github.com/bursar-dev/bursar/internal/store"
)

func main() { os.Exit(cli.Main(newRoot(new(cli.Globals)))) }

type options struct {
	trace       string
	market      time.Duration
	seed        uint64
	rate        int
	report      string
	noApprovals bool
}

// newRoot builds the soak's command: the whole system under seeded faults, checked at the end.
func newRoot(g *cli.Globals) *cobra.Command {
	var o options
	root := cli.Tool("soak", "Run the whole system for days of market time while things break, and check nothing was lost",
		`soak replays a real spot trace through the live service on a 3-node NATS cluster (embedded
servers on loopback, every stream and bucket at R3), with two arbiters (a leader and a standby),
the recorder into embedded ClickHouse, a collector publishing GPU telemetry at --rate events per
second plus one burst, and the capacity-model sim fleet as the market. It runs the window twice
with the same seed: once calm, once with these faults at seeded moments, each logged with its
market time:

  kill -9 of the leader in the middle of its round (its standby takes over), and of the standby;
  the recorder killed mid-batch; a NATS node stopped and restarted, and one cut off from the
  others; the history store failing every write for 10 min of market; placement KV writes slowed
  to 500 ms; a node's TELEMETRY message block damaged while it is down; Slack answering in 10 s,
  then refusing (in the warm-up, where the fleet's launch waits for an approval).

A budget policy holds scale-ups for an approver in a fake Slack (Slack's wire format), who
approves or rejects each at a seeded moment with a signed click on the leader's endpoint. The
policy restores first: replacing capacity lost to a reclaim, a failed launch or a vanished
instance is applied at once, and the approver answers after, Keep or Go back, the same way.
--no-approvals runs the same seed without the policy, to measure what approvals cost.

At the end it checks, and exits 1 when one does not hold: every published event is recorded
exactly once; no action id reached the actuator twice; the actuator holds what the books say;
no hold is lost or applied twice (or applied without an Approve clicked in time);
availability and cost within 0.5 points of the calm run; no goroutine left after shutdown. It
prints one summary line and writes a markdown report with the fault timeline.`, g)
	root.Example = `  soak --trace ../shared/data/traces/skyserve/AWS1              # 72 h of market
  soak --trace ../shared/data/traces/skyserve/AWS1 --market 12h --seed 7`
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if o.trace == "" {
			return fmt.Errorf("--trace is required: a replay trace folder, e.g. ../shared/data/traces/skyserve/AWS1")
		}
		log, err := g.Logger(cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		return run(cmd.Context(), o, log, cmd.OutOrStdout())
	}
	f := root.Flags()
	f.StringVar(&o.trace, "trace", "", "replay trace folder (zone files), e.g. ../shared/data/traces/skyserve/AWS1")
	f.DurationVar(&o.market, "market", 72*time.Hour, "market time of the window")
	f.Uint64Var(&o.seed, "seed", 1, "draws the window and the faults' moments")
	f.IntVar(&o.rate, "rate", 1000, "GPU telemetry events per second (wall time) beside the market")
	f.StringVar(&o.report, "report", "soak-report.md", "markdown report with the fault timeline; empty writes none")
	f.BoolVar(&o.noApprovals, "no-approvals", false, "run without the approval policy (the same seed's baseline for what approvals cost)")
	cli.DocumentEnv(root)
	return root
}

// run soaks the system in a scratch folder, prints the summary line, writes the report and
// returns the soak's verdict: an error when an invariant broke.
func run(ctx context.Context, o options, log *slog.Logger, out io.Writer) error {
	dir, err := os.MkdirTemp("", "bursar-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	eng, err := store.OpenEmbedded(ctx, filepath.Join(dir, "clickhouse"), "soak")
	if err != nil {
		return err
	}
	defer eng.Close()
	s, err := soak.Run(ctx, soak.Options{Trace: o.trace, Market: o.market, Seed: o.seed, Rate: o.rate,
		Engine: eng, Dir: dir, Log: log, NoApprovals: o.noApprovals})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, s.Line())
	if o.report != "" {
		if err := os.WriteFile(o.report, []byte(s.Markdown()), 0o644); err != nil {
			return fmt.Errorf("writing the soak report: %w", err)
		}
		fmt.Fprintln(out, "report:", o.report)
	}
	return s.Err()
}
