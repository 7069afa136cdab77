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
//	load/<workload>.csv    each workload's demand per minute, in SERVING.md's format
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
	in, err := load(ctx, o.Dir)
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
	inf, err := openInfra(ctx, o)
	if err != nil {
		return nil, err
	}
	defer inf.Close()
	clk := NewClock(start)
	rc, served, err := replayTrace(ctx, inf, o, in, clk, start, o.End)
	if err != nil {
		return nil, err
	}
	return writeReports(ctx, inf.Store, in.cfg, start, o.End, rc, served, filepath.Join(o.DataDir, "report"))
}

// inputs is what Dir holds, read and checked.
type inputs struct {
	cfg      *fleet.Config
	prices   []string
	capacity map[string][]int
	ticks    int
	traffic  map[string]traffic // by workload
	gpus     map[string]string  // instance type → GPU model
}

// load reads and checks Dir. The replay is as long as the shortest of the capacity traces and
// the demand files.
func load(ctx context.Context, dir string) (*inputs, error) {
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
	cat, err := (&pricesource.SkyPilotFiles{Paths: in.prices}).Fetch(ctx, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("reading the demo's prices: %w", err)
	}
	in.gpus = gpuModels(cat)
	if in.traffic, err = loadTraffic(dir, cfg); err != nil {
		return nil, err
	}
	in.ticks = min(in.ticks, shortest(in.traffic))
	return in, nil
}

// openInfra opens what the demo's arbiter runs on, as arbiter run opens its own: embedded NATS
// under DataDir with the streams, and the embedded store with the recorder. The data dir is taken
// first, so a demo never opens the files of an arbiter running on it.
func openInfra(ctx context.Context, o Options) (*system.Infra, error) {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	hist := o.HistoryDir
	if hist == "" {
		hist = o.DataDir
	}
	return system.OpenInfra(cctx, system.InfraOptions{Name: "arbiter-demo", Log: o.Log,
		LockDir: o.DataDir, Program: "arbiter demo",
		Embedded: bus.EmbeddedOptions{Port: -1, StoreDir: filepath.Join(o.DataDir, "nats"), Log: o.Log},
		Streams:  bus.Options{LeaseTTL: leaseTTL},
		History: &system.HistoryOptions{Store: store.Config{DataDir: hist, Owner: "arbiter demo", Database: o.Database},
			Recorder: recorder.Config{MaxDelay: 250 * time.Millisecond}}})
}

const leaseTTL = 10 * time.Second

// replayTrace runs the collector, the arbiter system (built as arbiter run builds it), the
// recorder and the driver from start to end of trace time, tick by tick on the virtual clock,
// then stops the arbiter and waits until the recorder has written everything. It returns the
// reclaims of each workload's replicas per location, and how each workload's demand was served.
func replayTrace(ctx context.Context, inf *system.Infra, o Options, in *inputs, clk *Clock, start, end time.Time) (map[wl]*reclaimStat, map[string]*servedStat, error) {
	fl := sim.New(in.cfg, clk.Now)
	fl.UseTrace(sim.Trace{Start: start, Tick: traceTick, Counts: in.capacity})
	pub := bus.NewPublisher(inf.JS)
	col := collect.New(pub, o.Log.With("part", "collector"), nil)
	job := collect.Job{Source: &pricesource.SkyPilotFiles{Paths: in.prices}, Timeout: 30 * time.Second}
	if _, err := col.RunOnce(ctx, job, start, true); err != nil {
		return nil, nil, fmt.Errorf("publishing the demo's prices: %w", err)
	}
	sys, err := inf.System(ctx, system.Options{Arbiter: arbiter.Options{Config: in.cfg, Actuator: fl.Router(),
		Log: o.Log.With("part", "arbiter"), Clock: clk, Identity: "demo", LeaseTTL: leaseTTL}, Slack: o.Slack})
	if err != nil {
		return nil, nil, err
	}
	recCtx, stopRec := context.WithCancel(ctx)
	defer stopRec()
	recDone := goRun(recCtx, inf.Recorder.Run)
	d := &driver{clk: clk, fleet: fl, cfg: in.cfg, pub: pub, svc: sys.Service, anomalies: sys.Anomalies, log: o.Log, tick: traceTick,
		start: start, end: end, traffic: in.traffic, gpus: in.gpus, progress: o.Progress,
		counters: map[string]*counter{}, noticed: map[string]time.Time{}, served: map[string]*servedStat{}}
	if err := sys.Start(ctx); err != nil {
		return nil, nil, errors.Join(err, sys.Close())
	}
	if err := errors.Join(d.run(ctx), sys.Close()); err != nil {
		return nil, nil, err
	}
	if err := drain(ctx, inf.JS); err != nil {
		return nil, nil, err
	}
	stopRec()
	return replacements(fl.Lives(), d.noticed), d.served, <-recDone
}

func goRun(ctx context.Context, f func(context.Context) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	return done
}

// drain waits until the recorder has committed every message of every stream.
func drain(ctx context.Context, js jetstream.JetStream) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, stream := range []string{bus.Market, bus.Telemetry, bus.Fleet} {
		name := "recorder-" + strings.ToLower(stream)
		for {
			c, err := js.Consumer(ctx, stream, name)
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
