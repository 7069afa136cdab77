package system

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/recorder"
	"github.com/bursar-dev/bursar/internal/store"
)

// InfraOptions say what the arbiter system runs on: the bus, its streams and buckets, and the
// history. `arbiter run`, the demo, the replay and the job replay open theirs here and differ only
// in the actuator and clock they give the arbiter (Infra.System).
type InfraOptions struct {
	// Name is the NATS connection's name ("arbiter", "replay").
	Name string
	Log  *slog.Logger
	// Conn and JS are a connection the caller made and keeps (arbiter run --nats): Close leaves it
	// open. Without one, the embedded server of Embedded starts and is connected to in-process.
	Conn *nats.Conn
	JS   jetstream.JetStream
	// Embedded configures the embedded server. An empty StoreDir puts its files in a temporary
	// directory that Close removes (the replays').
	Embedded bus.EmbeddedOptions
	Streams  bus.Options // the streams and buckets made sure of (bus.Ensure)
	// History, when set, opens the store and builds the recorder over the bus.
	History *HistoryOptions
	// LockDir, when set, is taken for Program (LockDataDir) before anything under it is opened: a
	// second process on the same data dir is refused with DataDirHeldError.
	LockDir string
	Program string
}

// HistoryOptions configure the store and the recorder writing the streams into it.
type HistoryOptions struct {
	Store    store.Config
	Recorder recorder.Config
}

// ErrStreams says the bus would not take the streams and buckets as asked (bus.Ensure).
var ErrStreams = errors.New("making sure of the streams and buckets")

// Infra is the bus and history the arbiter system runs on. Close stops what Open started.
type Infra struct {
	Conn *nats.Conn
	JS   jetstream.JetStream
	// Server is the embedded NATS server; nil on a given connection.
	Server *server.Server
	// Store and Recorder are the history; nil without one. The caller runs the recorder.
	Store    *store.Store
	Recorder *recorder.Recorder
	log      *slog.Logger
	undo     []func()
}

// OpenInfra takes the data dir, starts or adopts the bus, makes sure of the streams and buckets
// and opens the history.
func OpenInfra(ctx context.Context, o InfraOptions) (*Infra, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	in := &Infra{Conn: o.Conn, JS: o.JS, log: o.Log}
	err := in.open(ctx, o)
	if err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

func (in *Infra) open(ctx context.Context, o InfraOptions) error {
	if o.LockDir != "" {
		lock, err := LockDataDir(o.LockDir, o.Program)
		if err != nil {
			return err
		}
		in.undo = append(in.undo, func() { _ = lock.Release() })
	}
	if in.JS == nil {
		if err := in.startBus(ctx, o); err != nil {
			return err
		}
	}
	if err := bus.Ensure(ctx, in.JS, o.Streams); err != nil {
		return fmt.Errorf("%w: %w", ErrStreams, err)
	}
	if o.History == nil {
		return nil
	}
	st, rec, err := OpenHistory(ctx, *o.History, in.JS, o.Log)
	if err != nil {
		return err
	}
	in.undo = append(in.undo, func() { st.Close() })
	in.Store, in.Recorder = st, rec
	return nil
}

// startBus starts the embedded server (each role's key written under its store on first start)
// and connects to it in-process.
func (in *Infra) startBus(ctx context.Context, o InfraOptions) error {
	eo := o.Embedded
	if eo.StoreDir == "" {
		dir, err := os.MkdirTemp("", "bursar-"+o.Name+"-")
		if err != nil {
			return fmt.Errorf("creating a NATS store: %w", err)
		}
		in.undo = append(in.undo, func() { _ = os.RemoveAll(dir) })
		eo.StoreDir = dir
	}
	ns, err := bus.StartEmbedded(eo)
	if err != nil {
		return err
	}
	in.Server = ns
	in.undo = append(in.undo, func() { ns.Shutdown(); ns.WaitForShutdown() })
	in.log.Info("embedded NATS with JetStream is up", "url", ns.ClientURL(), "store", eo.StoreDir,
		"credentials", bus.CredsDir(eo.StoreDir))
	nc, js, err := bus.ConnectEmbedded(ctx, ns, eo.StoreDir, o.Name, in.log)
	if err != nil {
		return err
	}
	in.undo = append(in.undo, func() { _ = nc.FlushTimeout(time.Second); nc.Close() }) // best effort at exit
	in.Conn, in.JS = nc, js
	return nil
}

// OpenHistory opens the store (a ClickHouse server, or the embedded engine under its data dir),
// migrates its schema, and builds the recorder of js's streams into it. Close the store.
func OpenHistory(ctx context.Context, o HistoryOptions, js jetstream.JetStream, log *slog.Logger) (*store.Store, *recorder.Recorder, error) {
	sc := o.Store
	if sc.Log == nil {
		sc.Log = log
	}
	st, err := store.Open(ctx, sc)
	if err != nil {
		return nil, nil, err
	}
	where := "embedded under " + sc.DataDir
	if sc.DSN != "" {
		where = "server"
	}
	log.Info("ClickHouse history is open", "where", where, "database", st.Database())
	rc := o.Recorder
	if rc.Log == nil {
		rc.Log = log.With("part", "recorder")
	}
	return st, recorder.New(js, st, rc), nil
}

// System builds the arbiter system (New) on this bus.
func (in *Infra) System(ctx context.Context, o Options) (*System, error) {
	if o.Arbiter.JS != nil {
		return nil, errors.New("the arbiter system of an Infra runs on its JetStream: leave Options.Arbiter.JS unset")
	}
	o.Arbiter.JS = in.JS
	return New(ctx, o)
}

// Close stops what OpenInfra started, last first: the store, the connection, the embedded
// server, its temporary store, the data dir's lock. A given connection stays open.
func (in *Infra) Close() {
	for i := len(in.undo) - 1; i >= 0; i-- {
		in.undo[i]()
	}
	in.undo = nil
}
