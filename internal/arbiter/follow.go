package arbiter

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// inputs are what the arbiter follows: the market, telemetry and fleet streams, folded into the
// market view (and a job's own progress into the books) by every arbiter. They own the consumers
// and what each has folded, and wake the loop: urgent at a reclaim, changed at what may change a
// plan.
type inputs struct {
	js    jetstream.JetStream
	mk    *market
	bk    *books
	m     *metrics
	log   *slog.Logger
	clock Clock

	marketLookback    time.Duration
	telemetryLookback time.Duration
	demandLookback    time.Duration
	urgent, changed   chan struct{}
	// behind counts the inputs whose backlog is not folded yet. A leader plans only at 0, so a
	// fresh arbiter never acts on half a market.
	behind atomic.Int32
	// list are the followed subjects, set by follow before any message is folded.
	list []*input
}

// follow starts one ordered (ephemeral, unacknowledged) consumer per kind of input. Every arbiter
// reads everything for itself, from a lookback window, so a standby's view is as warm as the
// leader's; the durable consumers with a dead-letter queue belong to parts that must process each
// message once, like the recorder. Reclaims have a consumer of their own so they never queue
// behind a burst of prices. Each input counts as caught up once its backlog is folded (or was
// empty); the last one to catch up wakes the loop for a first plan.
func (f *inputs) follow(ctx context.Context) error {
	now := time.Now() // the server's time, which stamps the messages: not the Clock
	specs := []struct {
		stream, subject string
		lookback        time.Duration
	}{
		{bus.Market, "bursar.reclaim.>", 10 * time.Minute},
		{bus.Market, "bursar.price.>", f.marketLookback},
		{bus.Telemetry, "bursar.tokens.>", max(f.telemetryLookback, f.demandLookback)},
		{bus.Telemetry, "bursar.gpu.>", f.telemetryLookback},
		{bus.Fleet, "bursar.fleet.>", f.telemetryLookback},
		{bus.Fleet, "bursar.job.progress.>", f.telemetryLookback},
	}
	f.behind.Store(int32(len(specs)))
	for _, sp := range specs {
		caught := sync.OnceFunc(func() {
			if f.behind.Add(-1) == 0 {
				signal(f.urgent)
			}
		})
		start := now.Add(-sp.lookback)
		cons, err := f.js.OrderedConsumer(ctx, sp.stream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{sp.subject}, DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &start})
		if err != nil {
			return fmt.Errorf("following %s on %s: %w", sp.subject, sp.stream, err)
		}
		st, err := f.js.Stream(ctx, sp.stream)
		if err != nil {
			return fmt.Errorf("following %s on %s: %w", sp.subject, sp.stream, err)
		}
		in := &input{stream: st, subject: sp.subject}
		if info := cons.CachedInfo(); info != nil {
			in.folded.Store(info.Delivered.Stream) // what lies before the lookback counts as folded
		}
		f.list = append(f.list, in)
		cc, err := cons.Consume(func(m jetstream.Msg) {
			f.fold(m)
			if md, err := m.Metadata(); err == nil {
				in.folded.Store(md.Sequence.Stream)
				if md.NumPending == 0 {
					caught()
				}
			}
		})
		if err != nil {
			return fmt.Errorf("following %s on %s: %w", sp.subject, sp.stream, err)
		}
		if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
			caught()
		}
		go func() { <-ctx.Done(); cc.Stop() }()
	}
	return nil
}

// input is one followed subject and the stream sequence of the last message folded from it, so
// a caller stepping the service can wait until everything published is folded (AwaitFolded).
type input struct {
	stream  jetstream.Stream
	subject string
	folded  atomic.Uint64
}

// fold decodes one message (an event or a batch of them) into the market view and wakes the loop
// when a plan may change. Messages that do not decode are skipped here; the recorder's durable
// consumer dead-letters them. Events the arbiter refuses (see take) are not acted on: the message
// goes to DLQ with the reasons, and the other events of a batch are still folded.
func (f *inputs) fold(m jetstream.Msg) {
	evs, err := events.DecodeAll(m.Data())
	if err != nil {
		f.log.Debug("skipping a message that does not decode", "subject", m.Subject(), "err", err)
		return
	}
	var refused []string
	for i, e := range evs {
		if err := f.take(e, m.Subject()); err != nil {
			refused = append(refused, eventAt(evs, i)+err.Error())
		}
	}
	if len(refused) > 0 {
		f.refuse(m, refused)
	}
}

// foldEvent folds one event; it returns an error (errRefused) for one it will not act on.
func (f *inputs) foldEvent(e events.Event) error {
	switch e := e.(type) {
	case *events.PriceObserved:
		if f.mk.price(e) {
			signal(f.changed)
		}
	case *events.CapacityReclaimed:
		f.mk.reclaim(e, time.Now()) // wall clock, for the reaction-time metric (Action.Received)
		signal(f.urgent)
	case *events.TokensSample:
		if err := f.mk.tokens(e); err != nil {
			f.log.Warn("a tokens.sample is not counted as demand", "id", e.ID, "at", e.At, "err", err)
			return nil
		}
		signal(f.changed)
	case *events.GPUSample:
		f.mk.gpu(e)
		signal(f.changed)
	case *events.ReplicaState:
		f.mk.replicaState(e)
	case *events.JobProgress:
		var err error
		f.bk.with(func(l *ledger) { err = l.jobProgress(e) })
		return err
	}
	return nil
}
