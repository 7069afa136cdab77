package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/store"
)

// batch is a run of consecutive messages of one consumer, encoded per table.
type batch struct {
	first, last uint64    // stream sequences
	start, end  time.Time // stream timestamps of the first and the last message
	n           int       // messages, dead ones included
	events      int       // events in them (a dead message counts one), which MaxRows bounds
	rows        map[events.Type]*row
	count       map[events.Type]int
	msgs        []jetstream.Msg
	pending     uint64 // messages still undelivered after the last one
}

func (b *batch) empty() bool { return b.n == 0 }

// loop records one stream.
type loop struct {
	r       *Recorder
	stream  string
	durable string
	log     *slog.Logger
	dec     *decoder
	series  *series

	sizes   map[events.Type]int  // each table's block size in the last batch: the next one's capacity
	batched mark                 // the last message put in a batch
	stored  atomic.Pointer[mark] // the last message whose batch is in the store
	// delivered counts the messages read (by cut) and acked those acked (by commitAll, in its
	// own goroutine); both goroutines set the lag from them.
	delivered atomic.Int64
	acked     atomic.Int64
	// delivery is the consumer sequence of the last delivery read: the server numbers every
	// delivery, so a jump says one was lost on its way (see gap).
	delivery uint64
	// restart ends the stream's run with a cause, so that it starts over on a fresh consumer.
	restart context.CancelCauseFunc
	// seen counts the messages the iterator handed over and waiting says the loop is waiting
	// for the next one: the stall watch (see stalled) reads them from its own goroutine.
	seen    atomic.Uint64
	waiting atomic.Bool
}

// run reads and cuts batches here and commits them in a second goroutine, so that encoding the
// next batch overlaps the insert of the previous one.
func (l *loop) run(ctx context.Context, it jetstream.MessagesContext) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	full := make(chan *batch, 1)
	done := make(chan error, 1)
	go func() { done <- l.commitAll(ctx, stop, full) }()
	err := l.cut(ctx, it, full)
	close(full)
	if cerr := <-done; cerr != nil {
		return cerr
	}
	return err
}

func (l *loop) cut(ctx context.Context, it jetstream.MessagesContext, full chan<- *batch) error {
	b := l.newBatch()
	var carry jetstream.Msg
	for {
		m := carry
		carry = nil
		if m == nil {
			var err error
			if m, err = l.next(ctx, it, b); err != nil {
				if errors.Is(err, nats.ErrTimeout) && !b.empty() {
					if !l.send(ctx, full, b) {
						return nil
					}
					b = l.newBatch()
					continue
				}
				if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					return nil // unfinished batch: redelivered to the next run
				}
				if errors.Is(err, nats.ErrTimeout) {
					continue
				}
				l.log.Warn("reading messages", "err", err)
				continue
			}
		}
		md, err := m.Metadata()
		if err != nil {
			l.log.Warn("message without JetStream metadata; skipping", "subject", m.Subject(), "err", err)
			continue
		}
		if l.gap(md) {
			return nil // unfinished batch: redelivered, in order, to the next run
		}
		if md.Sequence.Stream <= l.batched.seq {
			// Redelivered: its batch is being inserted (it acks the message), or was stored and
			// the ack got lost (a node restarting drops it): acked again here, or it would come
			// back every AckWait and keep the consumer from ever catching up.
			if s := l.stored.Load(); s != nil && md.Sequence.Stream <= s.seq {
				_ = m.Ack()
			}
			continue
		}
		if !b.empty() && (b.events >= l.r.cfg.MaxRows || !md.Timestamp.Before(b.start.Add(l.r.cfg.MaxDelay))) {
			if !l.send(ctx, full, b) {
				return nil
			}
			b, carry = l.newBatch(), m
			continue
		}
		if b.empty() && l.renumbered(ctx, md) {
			return nil // unfinished batch: redelivered to the next run
		}
		if err := l.add(ctx, b, m, md); err != nil {
			return nil // ctx ended while storing a dead message
		}
	}
}

// gap reports, and ends the stream's run on, a delivery lost on its way: one whose consumer
// sequence skips one or more. The message it carried may lie below what the loop has batched, and
// its redelivery would then be taken for a repeat and acked unrecorded. Nothing below the lost
// delivery is affected (the batches sent hold what came before it), so the run starts over
// from the consumer's ack floor, as after a crash, and reads the rest again in order.
func (l *loop) gap(md *jetstream.MsgMetadata) bool {
	prev := l.delivery
	l.delivery = max(l.delivery, md.Sequence.Consumer)
	if prev == 0 || md.Sequence.Consumer <= prev+1 || l.restart == nil {
		return false
	}
	l.log.Warn("a delivery was lost on its way (a node restarting or cut off?); reading again from the last ack",
		"consumer", l.durable, "after_delivery", prev, "next_delivery", md.Sequence.Consumer, "stream_seq", md.Sequence.Stream)
	l.restart(causeLostDelivery)
	return true
}

// renumbered checks, when md comes a while (MaxDelay) after the last message batched, that the
// stream still holds that message, and ends the stream's run when it holds a later one there (see
// position.renumbered): messages stored while the stream was short were numbered with
// sequences the consumer had passed, and the next run reads from the last message stored on. A
// stream only loses messages when its replica restarts, which pauses it for longer than that, so
// a stream read without a pause is not asked.
func (l *loop) renumbered(ctx context.Context, md *jetstream.MsgMetadata) bool {
	if l.restart == nil || l.batched.seq == 0 || md.Timestamp.Sub(l.batched.at) < l.r.cfg.MaxDelay {
		return false
	}
	now, err := l.storedAtCursor(ctx)
	if err != nil {
		// No later look comes (the next message is batched at once): the next run reads the
		// position when it starts, and resumes as it shows.
		l.log.Warn("could not read the stream after a pause to see whether it renumbered; reading again from the last ack",
			"stream", l.stream, "err", err)
		l.restart(causeStalled)
		return true
	}
	if !(position{atCursor: now}).renumbered(l.batched) {
		return false
	}
	sayRenumbered(l.log, l.stream, l.batched, now)
	l.restart(causeRenumbered)
	return true
}

// storedAtCursor reads when the stream stored the message at the last sequence batched, trying a
// few times over about ten seconds: right after a replica restarts the stream may not answer yet.
func (l *loop) storedAtCursor(ctx context.Context) (time.Time, error) {
	var err error
	for try := range 6 {
		if try > 0 && backoff.Sleep(ctx, time.Duration(try)*700*time.Millisecond) != nil {
			return time.Time{}, ctx.Err()
		}
		var st jetstream.Stream
		if st, err = l.r.js.Stream(ctx, l.stream); err != nil {
			err = fmt.Errorf("reading stream %s: %w", l.stream, err)
			continue
		}
		var at time.Time
		if at, err = storedAt(ctx, st, l.batched.seq); err == nil {
			return at, nil
		}
	}
	return time.Time{}, err
}

// next waits for the next message: as long as it takes when the stream holds more, and at the
// tail only until the batch's window (plus Grace) is over.
func (l *loop) next(ctx context.Context, it jetstream.MessagesContext, b *batch) (jetstream.Msg, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wait := time.Second
	if !b.empty() && b.pending == 0 {
		wait = max(time.Until(b.start.Add(l.r.cfg.MaxDelay+l.r.cfg.Grace)), time.Millisecond)
	}
	l.waiting.Store(true)
	m, err := it.Next(jetstream.NextMaxWait(wait))
	l.waiting.Store(false)
	if err == nil {
		l.seen.Add(1)
	}
	return m, err
}

func (l *loop) newBatch() *batch {
	return &batch{rows: map[events.Type]*row{}, count: map[events.Type]int{}}
}

// add decodes m into b: one event, or every event of a batch. A message that cannot be decoded
// goes to DLQ and stays in the batch's range, so the batch's ack covers it. When events of a
// batch cannot be stored, the others are, and the message goes to DLQ naming the failed ones
// (a replay from DLQ repeats the stored ones, which their ids deduplicate).
func (l *loop) add(ctx context.Context, b *batch, m jetstream.Msg, md *jetstream.MsgMetadata) error {
	if b.empty() {
		b.first, b.start = md.Sequence.Stream, md.Timestamp
	}
	b.last, b.end, b.pending = md.Sequence.Stream, md.Timestamp, md.NumPending
	b.msgs = append(b.msgs, m)
	b.n++
	l.batched = mark{seq: md.Sequence.Stream, at: md.Timestamp}
	l.delivered.Add(1)
	evs, err := l.decode(m)
	if err != nil {
		b.events++
		return l.deadLetter(ctx, m, err.Error())
	}
	b.events += len(evs)
	t := evs[0].EventType()
	r := b.rows[t]
	if r == nil {
		r = &row{b: make([]byte, 0, l.sizes[t])} // no regrowth while the batch fills
		b.rows[t] = r
	}
	var failed []string
	before := b.count[t]
	for i, e := range evs {
		x := l.series.extra(e)
		if err := encode(r, e, &x); err != nil {
			failed = append(failed, eventAt(evs, i)+err.Error())
			continue
		}
		b.count[t]++
	}
	if n := b.count[t] - before; n > 0 {
		r.spans = append(r.spans, span{msg: len(b.msgs) - 1, rows: n})
	}
	if len(failed) > 0 {
		return l.deadLetter(ctx, m, "store: "+strings.Join(failed, "; "))
	}
	return nil
}

// decode decodes m as the event type its subject says, or says why it cannot.
func (l *loop) decode(m jetstream.Msg) ([]events.Event, error) {
	t, ok := events.TypeOfSubject(m.Subject())
	if !ok {
		return nil, errors.New("no event type is published on this subject")
	}
	evs, err := l.dec.decodeAll(t, m.Data())
	if err == nil {
		err = events.CheckSubject(evs[0].EventType(), m.Subject())
	}
	if err == nil {
		err = notAhead(evs, time.Now())
	}
	if err != nil {
		return nil, errors.New("decode: " + err.Error())
	}
	return evs, nil
}

// notAhead refuses events dated more than events.MaxSkew after now: a wrong clock or a forgery,
// which would stand in the history as the latest sample of its series until its time came. The
// recorder's clock is the wall clock; events are recorded after they are sent, so one that was
// not ahead when sent is not ahead when recorded, however late.
func notAhead(evs []events.Event, now time.Time) error {
	for i, e := range evs {
		if err := events.CheckTime(e, now); err != nil {
			if len(evs) > 1 {
				return fmt.Errorf("events[%d]: %w", i, err)
			}
			return err
		}
	}
	return nil
}

// eventAt names event i of a message in a DLQ reason; nothing when it came alone.
func eventAt(evs []events.Event, i int) string {
	if len(evs) == 1 {
		return ""
	}
	return fmt.Sprintf("events[%d] %s: ", i, evs[i].Header().ID)
}

// deadLetter copies m to DLQ with bus's headers, retrying until it is stored: a message is
// never dropped without a trace.
func (l *loop) deadLetter(ctx context.Context, m jetstream.Msg, reason string) error {
	dead, opts := bus.DeadLetter(m, l.stream, reason)
	err := l.retry(ctx, "storing a dead message in DLQ", func(ctx context.Context) error {
		_, err := l.r.js.PublishMsg(ctx, dead, opts...)
		return err
	})
	if err == nil {
		l.r.metrics.dead.WithLabelValues(l.stream).Inc()
		l.log.Warn("message sent to DLQ", "subject", m.Subject(), "reason", reason)
	}
	return err
}

func (l *loop) send(ctx context.Context, full chan<- *batch, b *batch) bool {
	for t, r := range b.rows {
		l.sizes[t] = len(r.b) + len(r.b)/8
	}
	l.r.metrics.lag.WithLabelValues(l.stream).Set(float64(b.pending) + float64(l.delivered.Load()-l.acked.Load()))
	select {
	case full <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

// commitAll inserts and acks batches in order. When ctx ends, batches not yet acked are left to
// redelivery; one whose insert was under way is then deduplicated by its token.
func (l *loop) commitAll(ctx context.Context, stop func(), full <-chan *batch) error {
	for b := range full {
		if err := l.commit(ctx, b); err != nil {
			stop()
			for range full {
			}
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

func (l *loop) commit(ctx context.Context, b *batch) error {
	// The first message's time tells a batch from one cut at the same sequences before the
	// stream lost messages and numbered new ones the same.
	token := fmt.Sprintf("%s:%d-%d:%d", l.durable, b.first, b.last, b.start.UnixNano())
	refused, err := l.insertAll(ctx, b, token)
	if err != nil {
		return err
	}
	if err := l.setAside(ctx, b, refused); err != nil {
		return err
	}
	l.stored.Store(&mark{seq: b.last, at: b.end})
	for _, m := range b.msgs {
		if err := m.Ack(); err != nil {
			// The rows are committed; the redelivery is deduplicated.
			l.log.Warn("ack failed; the message will be redelivered and deduplicated", "token", token, "err", err)
			break
		}
	}
	l.acked.Add(int64(b.n))
	l.r.metrics.acked.WithLabelValues(l.stream).Add(float64(b.n))
	l.r.metrics.lag.WithLabelValues(l.stream).Set(float64(b.pending) + float64(l.delivered.Load()-l.acked.Load()))
	return nil
}

// insertAll inserts the batch's tables side by side, each retried until it commits: ClickHouse
// parses each insert on its own, so a batch of GPU and token samples takes about the time of its
// larger table instead of both. Each insert carries the batch's token, so any of them repeated
// after a crash is dropped. A table whose rows the store refuses (store.Refused) is inserted
// without the rows at fault (see isolate), which are returned.
func (l *loop) insertAll(ctx context.Context, b *batch, token string) ([]refusal, error) {
	var todo []events.Type
	for _, t := range events.Types { // a fixed order
		if b.rows[t] != nil {
			todo = append(todo, t)
		}
	}
	errs := make([]error, len(todo))
	refused := make([][]refusal, len(todo))
	var wg sync.WaitGroup
	for i, t := range todo {
		wg.Go(func() {
			tbl, r := tables[t], b.rows[t]
			refused[i], errs[i] = l.insertTable(ctx, tbl, r, token)
			if errs[i] == nil {
				l.r.metrics.rows.WithLabelValues(tbl.name).Add(float64(b.count[t] - len(refused[i])))
			}
		})
	}
	wg.Wait()
	return slices.Concat(refused...), errors.Join(errs...)
}

// insert inserts rows into tbl, retrying while the store fails, until it commits or refuses the
// rows (a store.Refused error, returned at once: the same rows are refused however often sent).
func (l *loop) insert(ctx context.Context, tbl *table, token string, rows []byte) error {
	var refused error
	err := l.retry(ctx, "inserting into ClickHouse", func(ctx context.Context) error {
		err := l.r.store.Insert(ctx, tbl.name, tbl.columns, token, rows)
		if store.Refused(err) {
			refused = err
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return refused
}

// retry runs op until it succeeds or ctx ends, backing off between attempts with jitter, so
// the loops of every stream do not hit a recovering ClickHouse at the same instant. It logs
// when op starts failing and when it recovers, not every attempt.
func (l *loop) retry(ctx context.Context, what string, op func(context.Context) error) error {
	delays := backoff.Policy{Min: l.r.cfg.MinBackoff, Max: l.r.cfg.MaxBackoff}
	var since time.Time
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			if attempt > 1 {
				l.r.metrics.up.WithLabelValues(l.stream).Set(1)
				l.log.Info(what+" recovered", "attempts", attempt, "after", time.Since(since).Round(time.Millisecond))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.r.metrics.failures.WithLabelValues(l.stream).Inc()
		if attempt == 1 {
			since = time.Now()
			l.r.metrics.up.WithLabelValues(l.stream).Set(0)
			l.log.Warn(what+" failing; holding acks and retrying with backoff",
				"transient", store.Transient(err), "err", err)
		}
		select {
		case <-time.After(delays.Delay(attempt)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
