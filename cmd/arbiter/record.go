package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/oklog/run"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/recorder"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/system"
)

type recordOptions struct {
	metricsListen    string
	durable          string
	subjects         []string
	maxRows          int
	maxDelay         time.Duration
	telemetryTTLDays int
}

// newRecordCmd is `arbiter record`: the recorder alone, for scale-out. `arbiter run` runs the
// same recorder in-process.
func newRecordCmd(g *cli.Globals) *cobra.Command {
	var o recordOptions
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Record every event from NATS into ClickHouse (standalone recorder, for scale-out)",
		Long: `record copies every event from the MARKET, TELEMETRY and FLEET streams into ClickHouse: one
table per event type, and the cost and token rollups. It acks a message only after its rows are
committed, and redelivered batches are deduplicated, so nothing is lost or counted twice.

"arbiter run" already records; run "arbiter record" to move recording to other machines. Each
recorder needs its own --durable name, and recorders that share a stream split it with
--subject (replica and token series must stay on one recorder). With no --clickhouse it writes
the embedded store under --data-dir, which only one process may own.`,
		Example: `  arbiter record --nats nats://nats-1:4222 --clickhouse clickhouse://bursar@ch-1:9000/bursar
  arbiter record --durable recorder-a --subject 'FLEET=bursar.fleet.llm.>' --subject 'TELEMETRY=bursar.*.*.llm'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runRecord(cmd.Context(), g, o, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.metricsListen, "metrics-listen", "127.0.0.1:9465", "address of the Prometheus /metrics endpoint; empty to disable")
	f.StringVar(&o.durable, "durable", "recorder", "consumer name prefix; give each scale-out recorder its own")
	f.StringArrayVar(&o.subjects, "subject", nil, "STREAM=SUBJECT: record only these subjects of a stream (repeat); default all")
	f.IntVar(&o.maxRows, "max-rows", 50_000, "events (rows) per insert batch at most")
	f.DurationVar(&o.maxDelay, "max-delay", time.Second, "stream time one batch spans at most (the recording delay)")
	f.IntVar(&o.telemetryTTLDays, "telemetry-ttl-days", store.DefaultTelemetryTTLDays, "days raw GPU and token samples are kept (applies when the tables are created)")
	return cmd
}

func runRecord(ctx context.Context, g *cli.Globals, o recordOptions, log *slog.Logger) error {
	subjects, err := parseSubjects(o.subjects)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	nc, js, err := g.Dial(cctx, "", bus.RoleArbiter, "arbiter-record", log)
	if err != nil {
		return err
	}
	defer nc.Drain() //nolint:errcheck // best effort at exit
	reg := cli.NewRegistry()
	st, rec, err := system.OpenHistory(cctx, system.HistoryOptions{Store: historyConfig(g, "arbiter record", o.telemetryTTLDays),
		Recorder: recorder.Config{Durable: o.durable, Subjects: subjects, MaxRows: o.maxRows, MaxDelay: o.maxDelay,
			Registerer: reg}}, js, log)
	if err != nil {
		return err
	}
	defer st.Close()
	var group run.Group
	addContext(&group, ctx, func(ctx context.Context) error {
		return cli.ServeMetrics(ctx, o.metricsListen, reg, log)
	})
	addContext(&group, ctx, rec.Run)
	log.Info("recorder running; stop with Ctrl-C or SIGTERM", "database", st.Database())
	return group.Run()
}

// historyConfig is the ClickHouse store the global flags select: the server of --clickhouse, or
// the embedded engine under --data-dir owned by program.
func historyConfig(g *cli.Globals, program string, ttlDays int) store.Config {
	return store.Config{DSN: g.ClickHouse, DataDir: g.DataDir, Owner: program, TelemetryTTLDays: ttlDays}
}

// parseSubjects reads repeated STREAM=SUBJECT flags.
func parseSubjects(flags []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, f := range flags {
		stream, subject, ok := strings.Cut(f, "=")
		stream = strings.ToUpper(strings.TrimSpace(stream))
		if !ok || subject == "" {
			return nil, fmt.Errorf("--subject %q: want STREAM=SUBJECT, e.g. FLEET=bursar.fleet.llm.>", f)
		}
		switch stream {
		case bus.Market, bus.Telemetry, bus.Fleet:
		default:
			return nil, fmt.Errorf("--subject %q: stream must be %s, %s or %s", f, bus.Market, bus.Telemetry, bus.Fleet)
		}
		out[stream] = append(out[stream], strings.TrimSpace(subject))
	}
	return out, nil
}
