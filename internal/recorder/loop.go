package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	start       time.Time // stream timestamp of the first message
	n           int       // messages, dead ones included
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

	batched   uint64 // highest stream sequence put in a batch
	delivered int    // messages read
	acked     int    // messages acked
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
		if md.Sequence.Stream <= l.batched {
			continue // redelivered while its batch was still being inserted
		}
		if !b.empty() && (b.n >= l.r.cfg.MaxRows || !md.Timestamp.Before(b.start.Add(l.r.cfg.MaxDelay))) {
			if !l.send(ctx, full, b) {
				return nil
			}
			b, carry = l.newBatch(), m
			continue
		}
		if err := l.add(ctx, b, m, md); err != nil {
			return nil // ctx ended while storing a dead message
		}
	}
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
	return it.Next(jetstream.NextMaxWait(wait))
}

func (l *loop) newBatch() *batch {
	return &batch{rows: map[events.Type]*row{}, count: map[events.Type]int{}}
}

// add decodes m into b. A message that cannot be stored goes to DLQ and stays in the batch's
// range, so the batch's ack covers it.
func (l *loop) add(ctx context.Context, b *batch, m jetstream.Msg, md *jetstream.MsgMetadata) error {
	if b.empty() {
		b.first, b.start = md.Sequence.Stream, md.Timestamp
	}
	b.last, b.pending = md.Sequence.Stream, md.NumPending
	b.msgs = append(b.msgs, m)
	b.n++
	l.batched = md.Sequence.Stream
	l.delivered++
	t, ok := typeOf(m.Subject())
	if !ok {
		return l.deadLetter(ctx, m, "no event type is published on this subject")
	}
	e, err := l.dec.decode(t, m.Data())
	if err == nil && e.EventType() != t {
		err = fmt.Errorf("a %s event on a %s subject", e.EventType(), t)
	}
	if err != nil {
		return l.deadLetter(ctx, m, "decode: "+err.Error())
	}
	x := l.series.extra(e)
	r := b.rows[t]
	if r == nil {
		r = &row{}
		b.rows[t] = r
	}
	if err := encode(r, e, &x); err != nil {
		return l.deadLetter(ctx, m, "store: "+err.Error())
	}
	b.count[t]++
	return nil
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
	l.r.metrics.lag.WithLabelValues(l.stream).Set(float64(b.pending) + float64(l.delivered-l.acked))
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
			if errors.Is(err, errCrash) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

var errCrash = errors.New("recorder: simulated crash")

func (l *loop) commit(ctx context.Context, b *batch) error {
	token := fmt.Sprintf("%s:%d-%d", l.durable, b.first, b.last)
	done := 0
	for _, t := range events.Types { // a fixed order
		r := b.rows[t]
		if r == nil {
			continue
		}
		tbl := tables[t]
		err := l.retry(ctx, "inserting into ClickHouse", func(ctx context.Context) error {
			return l.r.store.Insert(ctx, tbl.name, tbl.columns, token, r.b)
		})
		if err != nil {
			return err
		}
		l.r.metrics.rows.WithLabelValues(tbl.name).Add(float64(b.count[t]))
		if done++; l.r.cfg.crashAfter > 0 && done >= l.r.cfg.crashAfter {
			return errCrash
		}
	}
	if l.r.cfg.crashAfter < 0 {
		return errCrash
	}
	for _, m := range b.msgs {
		if err := m.Ack(); err != nil {
			// The rows are committed; the redelivery is deduplicated.
			l.log.Warn("ack failed; the message will be redelivered and deduplicated", "token", token, "err", err)
			break
		}
	}
	l.acked += b.n
	l.r.metrics.acked.WithLabelValues(l.stream).Add(float64(b.n))
	l.r.metrics.lag.WithLabelValues(l.stream).Set(float64(b.pending) + float64(l.delivered-l.acked))
	return nil
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
