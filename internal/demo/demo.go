package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/collect"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/pricesource"
	"github.com/bursar-dev/bursar/internal/recorder"
	"github.com/bursar-dev/bursar/internal/replay"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/system"
)

// Options configure a demo run. Dir holds what it replays:
//
//	bursar.yaml            the fleet (every location's actuator must be sim)
//	prices/*.csv           catalog prices in SkyPilot's format (aws_vms.csv, gcp_vms.csv)
//	trace/<location>.json  each location's spot capacity, one count per tick
//	load/arrival-rates.csv the shape of the traffic
type Options struct {
	Dir     string
	DataDir string        // created; embedded NATS and ClickHouse files, and the report
	Length  time.Duration // trace time to replay; 0 or more than the trace: all of it
	// HistoryDir is where the embedded ClickHouse keeps its files (default DataDir). chDB keeps
	// the first data path for the life of the process, so runs in one process share one.
	HistoryDir string
	// Database is the ClickHouse database the history goes to (default bursar). chDB keeps one
	// data path per process, so two runs in one process (tests) need two databases.
	Database string
	// Slack, when enabled, gets the arbiter's alerts and approval requests, as with arbiter run.
	Slack slack.Config
	// End is when the replayed trace ends, in trace time (default: the start of this hour, so the
	// history reads as the last hours and runs within one hour replay the same times).
	End      time.Time
	Progress io.Writer // the progress bar; nil for none
	Log      *slog.Logger
}

// traceTick is the tick of the capacity traces.
const traceTick = time.Minute

// Run replays the trace through the whole system and writes the reports under DataDir/report.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	in, err := load(o.Dir)
	if err != nil {
		return nil, err
	}
	length := time.Duration(in.ticks) * traceTick
	if o.Length > 0 && o.Length < length {
		length = o.Length.Truncate(traceTick)
	}
	if length < traceTick {
		return nil, fmt.Errorf("--length %v: replay at least one %v tick of the trace", o.Length, traceTick)
	}
	if o.End.IsZero() {
		o.End = time.Now().UTC().Truncate(time.Hour)
	}
	start := o.End.Add(-length)
	if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("creating the data directory: %w", err)
	}
	inf, err := startInfra(ctx, o, in.cfg)
	if err != nil {
		return nil, err
	}
	defer inf.close()
	clk := NewClock(start)
	rc, err := inf.replay(ctx, o, in, clk, start, o.End)
	if err != nil {
		return nil, err
	}
	return writeReports(ctx, inf.st, in.cfg, start, o.End, rc, filepath.Join(o.DataDir, "report"))
}

// inputs is what Dir holds, read and checked.
type inputs struct {
	cfg      *fleet.Config
	prices   []string
	capacity map[string][]int
	ticks    int
	rates    []float64
}

func load(dir string) (*inputs, error) {
	cfg, err := fleet.Load(filepath.Join(dir, "bursar.yaml"))
	if err != nil {
		return nil, err
	}
	in := &inputs{cfg: cfg, capacity: map[string][]int{}}
	tr, err := replay.LoadTrace(os.DirFS(dir), "trace", replay.LoadOptions{TickSeconds: int(traceTick / time.Second)})
	if err != nil {
		return nil, err
	}
	for _, z := range tr.Zones {
		if _, ok := cfg.Location(z.Name); !ok {
			return nil, fmt.Errorf("%s/trace/%s.json: no location %q in bursar.yaml: name each trace file after its location",
				dir, z.Name, z.Name)
		}
		in.capacity[z.Name] = z.Capacity
	}
	for _, l := range cfg.Locations {
		if l.Actuator.Kind != fleet.KindSim {
			return nil, fmt.Errorf("%s/bursar.yaml: location %s uses the %s actuator; the demo runs sim locations only",
				dir, l.Name, l.Actuator.Kind)
		}
		if _, ok := in.capacity[l.Name]; !ok {
			return nil, fmt.Errorf("%s/trace: no %s.json for location %s", dir, l.Name, l.Name)
		}
	}
	in.ticks = tr.Len
	if in.prices, err = filepath.Glob(filepath.Join(dir, "prices", "*.csv")); err != nil || len(in.prices) == 0 {
		return nil, fmt.Errorf("%s/prices: no *.csv price catalog", dir)
	}
	f, err := os.Open(filepath.Join(dir, "load", "arrival-rates.csv"))
	if err != nil {
		return nil, fmt.Errorf("reading the traffic shape: %w", err)
	}
	defer f.Close()
	in.rates, err = ParseRates(f, "load/arrival-rates.csv")
	return in, err
}

// infra is the running parts under the arbiter: embedded NATS, the store and the JetStream
// connection.
type infra struct {
	log   *slog.Logger
	close func()
	js    jetstream.JetStream
	st    *store.Store
}

func startInfra(ctx context.Context, o Options, cfg *fleet.Config) (*infra, error) {
	var undo []func()
	closeAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	ns, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: -1, StoreDir: filepath.Join(o.DataDir, "nats"), Log: o.Log})
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { ns.Shutdown(); ns.WaitForShutdown() })
	o.Log.Info("embedded NATS with JetStream is up", "url", ns.ClientURL())
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, js, err := bus.ConnectEmbedded(cctx, ns, filepath.Join(o.DataDir, "nats"), "arbiter-demo", o.Log)
	if err != nil {
		closeAll()
		return nil, err
	}
	undo = append(undo, func() { nc.Close() })
	if err := bus.Ensure(cctx, js, bus.Options{LeaseTTL: leaseTTL}); err != nil {
		closeAll()
		return nil, err
	}
	hist := o.HistoryDir
	if hist == "" {
		hist = o.DataDir
	}
	st, err := store.Open(cctx, store.Config{DataDir: hist, Owner: "arbiter demo", Database: o.Database, Log: o.Log})
	if err != nil {
		closeAll()
		return nil, err
	}
	undo = append(undo, func() { st.Close() })
	return &infra{log: o.Log, close: closeAll, js: js, st: st}, nil
}

const leaseTTL = 10 * time.Second

// replay runs the collector, the arbiter system (built as arbiter run builds it), the recorder and
// the driver from start to end of trace time, tick by tick on the virtual clock, then stops the
// arbiter and waits until the recorder has written everything. It returns
// the reclaims of each workload's replicas per location.
func (s *infra) replay(ctx context.Context, o Options, in *inputs, clk *Clock, start, end time.Time) (map[wl]*reclaimStat, error) {
	fl := sim.New(in.cfg, clk.Now)
	fl.UseTrace(sim.Trace{Start: start, Tick: traceTick, Counts: in.capacity})
	router := actuate.Router{}
	for _, l := range in.cfg.Locations {
		router[l.Name] = fl
	}
	pub := bus.NewPublisher(s.js)
	col := collect.New(pub, s.log.With("part", "collector"), nil)
	job := collect.Job{Source: &pricesource.SkyPilotFiles{Paths: in.prices}, Timeout: 30 * time.Second}
	if _, err := col.RunOnce(ctx, job, start, true); err != nil {
		return nil, fmt.Errorf("publishing the demo's prices: %w", err)
	}
	sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: in.cfg, JS: s.js, Actuator: router,
		Log: s.log.With("part", "arbiter"), Clock: clk, Identity: "demo", LeaseTTL: leaseTTL}, Slack: o.Slack})
	if err != nil {
		return nil, err
	}
	rec := recorder.New(s.js, s.st, recorder.Config{Log: s.log.With("part", "recorder"), MaxDelay: 250 * time.Millisecond})
	recCtx, stopRec := context.WithCancel(ctx)
	defer stopRec()
	recDone := goRun(recCtx, rec.Run)
	d := &driver{clk: clk, fleet: fl, cfg: in.cfg, pub: pub, svc: sys.Service, log: s.log, tick: traceTick,
		start: start, end: end, curve: NewCurve(in.rates, end.Sub(start)), progress: o.Progress,
		counters: map[string]*counter{}, noticed: map[string]time.Time{}}
	if err := sys.Start(ctx); err != nil {
		return nil, errors.Join(err, sys.Close())
	}
	if err := errors.Join(d.run(ctx), sys.Close()); err != nil {
		return nil, err
	}
	if err := s.drain(ctx); err != nil {
		return nil, err
	}
	stopRec()
	return replacements(fl.Lives(), d.noticed), <-recDone
}

func goRun(ctx context.Context, f func(context.Context) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	return done
}

// drain waits until the recorder has committed every message of every stream.
func (s *infra) drain(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, stream := range []string{bus.Market, bus.Telemetry, bus.Fleet} {
		name := "recorder-" + strings.ToLower(stream)
		for {
			c, err := s.js.Consumer(ctx, stream, name)
			if err == nil {
				var info *jetstream.ConsumerInfo
				if info, err = c.Info(ctx); err == nil && info.NumPending == 0 && info.NumAckPending == 0 {
					break
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for the recorder to write stream %s: %w", stream, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}
