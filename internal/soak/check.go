package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/recorder"
)

// tally is one table's events: distinct ids published (what the streams hold, and what the bus
// acknowledged to the collector), rows in the table, published ids among them, and distinct ids
// nobody published; missing are the published events the table does not hold, in stream order.
type tally struct {
	published, rows, recorded, unknown int64
	missing                            []origin
}

// checkBooks compares what the books say each group holds with what the actuator holds.
func (r *rig) checkBooks(ctx context.Context) error {
	books, err := arbiter.LoadBooks(ctx, r.js, bus.BucketPlacement)
	if err != nil {
		return err
	}
	obs, err := r.act.Observe(ctx)
	if err != nil {
		return err
	}
	groups := map[actuate.Group]bool{}
	for _, o := range obs {
		groups[o.Group] = true
	}
	for _, b := range books {
		for _, rep := range b.Replicas {
			groups[actuate.Group{Workload: b.Workload, Location: rep.Location, Market: rep.Market}] = true
		}
	}
	var bad []string
	for g := range groups {
		held, err := r.act.Desired(ctx, g)
		if err != nil {
			return err
		}
		want := 0
		if b := books[g.Workload]; b != nil {
			want = b.Count(g)
		}
		if held != want {
			bad = append(bad, fmt.Sprintf("%s/%s/%s: actuator %d, books %d", g.Workload, g.Location, g.Market, held, want))
		}
	}
	slices.Sort(bad)
	r.run.bookMismatches = bad
	r.run.doubled, r.run.actions = r.act.doubled()
	return nil
}

// recordedStreams are the streams the recorder copies.
var recordedStreams = []string{bus.Market, bus.Telemetry, bus.Fleet}

// checkRecorded waits for the recorder to ack every stream, then counts each table's events in
// the streams and in the store; visit sees every event in the streams.
func (r *rig) checkRecorded(ctx context.Context, visit func(events.Event)) error {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	ids := map[string]map[string]origin{}
	for _, s := range recordedStreams {
		last, err := caughtUp(wctx, r.js, s)
		if err != nil {
			return fmt.Errorf("%w (goroutines: %s)", err, r.dumpStacks())
		}
		if err := streamIDs(wctx, r.js, s, last, ids, visit); err != nil {
			return err
		}
	}
	streamed := len(ids[gpuTable])
	for id := range r.load.ackedIDs() { // acked to the collector, whether or not the stream kept it
		if ids[gpuTable] == nil {
			ids[gpuTable] = map[string]origin{}
		}
		if _, ok := ids[gpuTable][id]; !ok {
			ids[gpuTable][id] = origin{id: id, stream: bus.Telemetry}
		}
	}
	r.run.streamLost = int64(len(ids[gpuTable]) - streamed)
	r.run.tables = map[string]tally{}
	for tbl, set := range ids {
		t, err := r.count(wctx, tbl, set)
		if err != nil {
			return err
		}
		r.run.tables[tbl] = t
	}
	dlq, err := r.js.Stream(wctx, bus.DLQ)
	if err == nil {
		r.run.dead = dlq.CachedInfo().State.Msgs
	}
	r.run.loadAcked, r.run.loadFailed = r.load.acked.Load(), r.load.failed.Load()
	r.run.busLosses = r.load.lost()
	r.run.refused = r.st.refused.Load()
	return nil
}

// gpuTable is where the collector's load is recorded.
const gpuTable = "gpu_sample"

// count compares table with the ids published to it.
func (r *rig) count(ctx context.Context, tbl string, published map[string]origin) (tally, error) {
	out, err := r.st.Query(ctx, "SELECT id FROM "+r.st.Table(tbl))
	if err != nil {
		return tally{}, fmt.Errorf("reading %s: %w", tbl, err)
	}
	t := tally{published: int64(len(published))}
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		var row struct{ ID string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			return tally{}, fmt.Errorf("reading %s: %q: %w", tbl, line, err)
		}
		t.rows++
		if !seen[row.ID] {
			seen[row.ID] = true
			if _, ok := published[row.ID]; ok {
				t.recorded++
			} else {
				t.unknown++
			}
		}
	}
	t.missing = missing(published, seen)
	return t, nil
}

// caughtUp waits until the recorder's consumer on stream has acked the stream's last message,
// and returns that message's sequence.
func caughtUp(ctx context.Context, js jetstream.JetStream, stream string) (uint64, error) {
	durable := "recorder-" + strings.ToLower(stream)
	var state string
	for {
		st, serr := js.Stream(ctx, stream)
		c, cerr := js.Consumer(ctx, stream, durable)
		if serr == nil && cerr == nil {
			info, err := c.Info(ctx)
			if last := st.CachedInfo().State.LastSeq; err == nil && info.NumAckPending == 0 && info.NumPending == 0 && info.AckFloor.Stream >= last {
				return last, nil
			}
			if err == nil {
				state = fmt.Sprintf("last %d, acked to %d, %d pending, %d unacked", st.CachedInfo().State.LastSeq,
					info.AckFloor.Stream, info.NumPending, info.NumAckPending)
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("the recorder did not catch up with %s (%s): %w", stream, state, errors.Join(ctx.Err(), serr, cerr))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// streamIDs adds the id of every event stored in stream up to sequence last, by the table it is
// recorded in. A read
// the cluster does not answer (a consumer not yet in place on every node) starts again where it
// stopped.
func streamIDs(ctx context.Context, js jetstream.JetStream, stream string, last uint64, ids map[string]map[string]origin,
	visit func(events.Event)) error {
	next := uint64(1)
	for tries := 0; next <= last; tries++ {
		n, err := readFrom(ctx, js, stream, next, last, ids, visit)
		next = n
		if err != nil && tries == 20 {
			return fmt.Errorf("reading %s from %d: %w", stream, next, err)
		}
		if err != nil {
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// readFrom reads stream from sequence next up to last and returns the sequence to read next.
func readFrom(ctx context.Context, js jetstream.JetStream, stream string, next, last uint64, ids map[string]map[string]origin,
	visit func(events.Event)) (uint64, error) {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: next})
	if err != nil {
		return next, err
	}
	for next <= last {
		batch, err := cons.Fetch(1000, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return next, err
		}
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				return next, err
			}
			if meta.Sequence.Stream > last {
				return last + 1, nil
			}
			evs, _ := events.DecodeAll(m.Data()) // what does not decode is the recorder's to dead-letter
			for _, e := range evs {
				visit(e)
				if tbl, ok := recorder.TableOf(e.EventType()); ok {
					if ids[tbl] == nil {
						ids[tbl] = map[string]origin{}
					}
					h := e.Header()
					ids[tbl][h.ID] = origin{id: h.ID, stream: stream, seq: meta.Sequence.Stream, stored: meta.Timestamp, at: h.At}
				}
			}
			next = meta.Sequence.Stream + 1
		}
		if err := batch.Error(); err != nil {
			return next, err
		}
	}
	return next, nil
}

// dumpStacks writes every goroutine's stack next to the run's files, for a run that stalled.
func (r *rig) dumpStacks() string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("bursar-soak-stacks-%d.txt", time.Now().UnixNano()))
	f, err := os.Create(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	_ = pprof.Lookup("goroutine").WriteTo(f, 2)
	return path
}
