package costseries

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/anomalywatch"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/system"
)

// reportEvery is how often the arbiter reports a group that did not change
// (anomalywatch's staleness rule drops a group silent for longer than 15 minutes).
const reportEvery = 15 * time.Minute

// history is the embedded engine's directory for this process: libchdb keeps the first data
// path a process opens, so every Replay of a process records under the same one, each into a
// database of its own.
var history struct {
	once sync.Once
	dir  string
	err  error
	runs int
}

// historyDir is the process's history directory and a fresh database name in it.
func historyDir() (dir, database string, err error) {
	history.once.Do(func() { history.dir, history.err = os.MkdirTemp("", "bursar-costseries-") })
	history.runs++
	return history.dir, fmt.Sprintf("costseries_%d_%d", os.Getpid(), history.runs), history.err
}

// record publishes the runs as the arbiter would have reported them (replica.state events) on an
// embedded bus, runs the recorder into the embedded store until it has written them all, and
// reads the series back with the watcher's reader (anomalywatch.ReplicaSteps), at each run's
// tick, summed into steps.
func record(ctx context.Context, runs []run) ([]Series, error) {
	dir, db, err := historyDir()
	if err != nil {
		return nil, fmt.Errorf("making the replays' history directory: %w", err)
	}
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	in, err := system.OpenInfra(octx, system.InfraOptions{Name: "costseries",
		Embedded: bus.EmbeddedOptions{Port: -1},
		History:  &system.HistoryOptions{Store: store.Config{DataDir: dir, Owner: "costseries", Database: db}}})
	if err != nil {
		return nil, fmt.Errorf("opening the replays' bus and history: %w", err)
	}
	defer in.Close()
	defer func() { _ = in.Store.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"`") }()
	if err := publishRecorded(ctx, in, runs); err != nil {
		return nil, err
	}
	var out []Series
	for _, r := range runs {
		held, err := readHeld(ctx, in.Store, r)
		if err != nil {
			return nil, err
		}
		ss, err := r.series(held)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	return out, nil
}

// publishRecorded publishes every run's events and waits until the recorder has stored them.
func publishRecorded(ctx context.Context, in *system.Infra, runs []run) error {
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- in.Recorder.Run(rctx) }()
	err := publishRuns(ctx, bus.NewPublisher(in.JS), in.Store, runs)
	stop()
	if rerr := <-done; err == nil && rerr != nil && ctx.Err() == nil {
		err = fmt.Errorf("recording the replays: %w", rerr)
	}
	return err
}

func publishRuns(ctx context.Context, pub *bus.Publisher, st *store.Store, runs []run) error {
	n := 0
	for _, r := range runs {
		evs := r.events()
		if err := pub.PublishBatch(ctx, evs); err != nil {
			return fmt.Errorf("publishing the replays' replica.state: %w", err)
		}
		n += len(evs)
	}
	return awaitRecorded(ctx, st, n)
}

// awaitRecorded waits until the store holds n distinct replica.state events.
func awaitRecorded(ctx context.Context, st *store.Store, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	q := "SELECT toInt64(uniqExact(id)) AS n FROM " + st.Table("replica_state")
	for {
		out, err := st.Query(ctx, q)
		var got struct {
			N int `json:"n"`
		}
		if err == nil {
			err = json.Unmarshal(out, &got)
		}
		if err != nil {
			return fmt.Errorf("counting the recorded replica.state events: %w", err)
		}
		if got.N >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the recorder to store %d replica.state events (%d so far): %w", n, got.N, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// events are the run's replica.state events: each group with some spend at its first tick, at
// each change and at least every reportEvery, as the arbiter reports it. Ready is the replicas
// held, launching ones included, since that is what the replays bill.
func (r run) events() []events.Event {
	every := int(reportEvery / r.tick)
	var out []events.Event
	for i := range r.groups {
		g := &r.groups[i]
		if !g.spends() {
			continue
		}
		last := 0
		for t, n := range g.held {
			if t > 0 && n == g.held[t-1] && t-last < every {
				continue
			}
			last = t
			out = append(out, events.Stamp(&events.ReplicaState{Meta: events.Meta{At: Epoch.Add(time.Duration(t) * r.tick)},
				Workload: g.key.Workload, Location: g.key.Location, Provider: g.provider, Market: events.Market(g.key.Market),
				Offer: g.offer, GPUModel: g.key.GPUType, GPUs: g.gpus, USDPerHour: g.usd, Desired: n, Ready: n}))
		}
	}
	return out
}

// readHeld reads r's groups back at the run's tick: each tick a group holds what its last
// recorded state says, until that state is older than reportEvery.
func readHeld(ctx context.Context, h anomalywatch.History, r run) ([][]int, error) {
	if len(r.groups) == 0 {
		return nil, nil
	}
	ticks := len(r.groups[0].held)
	rows, err := anomalywatch.ReplicaSteps(ctx, h, r.tick, Epoch, Epoch.Add(time.Duration(ticks)*r.tick))
	if err != nil {
		return nil, err
	}
	type groupKey struct{ workload, location, market, offer string }
	index := map[groupKey]int{}
	for i, g := range r.groups {
		index[groupKey{g.key.Workload, g.key.Location, g.key.Market, g.offer}] = i
	}
	held := make([][]int, len(r.groups))
	last := make([]int, len(r.groups)) // tick of each group's last state
	for i := range held {
		held[i], last[i] = make([]int, ticks), -1
	}
	for _, row := range rows {
		i, ok := index[groupKey{row.Workload, row.Location, row.Market, row.Offer}]
		if !ok {
			continue // another run's
		}
		g := &r.groups[i]
		if row.GPU != g.key.GPUType || row.USD != g.usd || int(row.GPUs) != g.gpus {
			return nil, fmt.Errorf("recorded group %s reads back as %s at $%g/h × %g GPUs, published %s at $%g/h × %d", g.key, row.GPU, row.USD, row.GPUs, g.key.GPUType, g.usd, g.gpus)
		}
		t := int(time.Unix(row.Step, 0).Sub(Epoch) / r.tick)
		fill(held[i], last[i], t, r.tick)
		held[i][t], last[i] = int(row.Ready), t
	}
	for i := range held {
		fill(held[i], last[i], ticks, r.tick)
	}
	return held, nil
}

// fill carries the state of tick from over the ticks before to, while it is not stale.
func fill(held []int, from, to int, tick time.Duration) {
	if from < 0 {
		return
	}
	for t := from + 1; t < to && time.Duration(t-from)*tick <= reportEvery; t++ {
		held[t] = held[from]
	}
}
