// Package recorder writes every event from JetStream into ClickHouse, losing and duplicating
// nothing. It runs inside `arbiter run` and standalone as `arbiter record`.
//
// One durable pull consumer per stream feeds a loop that cuts the messages into batches, encodes
// each batch as one TabSeparated insert per table, and acks the batch's messages only after
// every insert committed. Batches are deterministic: a batch starts at the first unacked
// message and ends once it holds MaxRows events (each event of a batch message is a row) or at
// the first message stored MaxDelay after its first one (by the stream's timestamps), or, at the
// tail of the stream, when no such message arrived by then plus Grace. So a batch redelivered
// after a crash is cut the same way, and its insert_deduplication_token (consumer, stream
// sequence range and first message's time) makes ClickHouse drop the repeat; ReplacingMergeTree
// by event id is the backstop.
//
// A stream's read starts over from one cursor, the last message stored, as nats.go's ordered
// consumer resets from its own: a detector ends the stream's run with its cause (the watch: a
// read that stalled, a stream that fell behind its consumer because it lost messages; the loop:
// a delivery lost on its way, a stream that numbered new messages with sequences already read),
// and one pure rule, resumeFrom, decides where the next run's consumer resumes from the cursor
// and what the server says of the stream and the consumer. Each restart is counted by its cause;
// a stream that lost messages is logged as an error.
//
// While ClickHouse is down or failing, the loop keeps the batch, retries with backoff, stops
// consuming (so the lag grows in JetStream, not in memory), logs once when inserts start
// failing and once when they recover, and exports the lag as bursar_recorder_lag_messages.
// One message never holds a stream: a message that does not decode, whose events are invalid or
// dated more than events.MaxSkew ahead, goes to DLQ; and when ClickHouse refuses a batch's rows
// themselves (store.Refused: a value it cannot read or hold, a constraint), which no retry can
// fix, the batch is split until the refused rows are found, their messages go to DLQ with the
// store's reason, and the rest is stored and acked (bursar_recorder_refused_messages_total).
// Every other failure, a store that is down, overloaded or failing without saying why, is waited
// out.
package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// Store is what the recorder needs from the history store.
type Store interface {
	Insert(ctx context.Context, table, columns, token string, rows []byte) error
	Query(ctx context.Context, query string) ([]byte, error)
	Table(name string) string
}

// Config tunes the recorder. The zero value records all streams with the defaults.
type Config struct {
	// Durable is the consumers' name prefix; scale-out recorders each take their own, with
	// Subjects partitioning the streams between them. Default "recorder".
	Durable string
	// Streams to record; default MARKET, TELEMETRY and FLEET.
	Streams []string
	// Subjects filters each stream (e.g. one partition's workloads); default everything.
	Subjects map[string][]string
	// MaxRows bounds a batch's events (default 50,000); a batch message's events all join the
	// batch, so it may pass the bound by one message's worth.
	MaxRows  int
	MaxDelay time.Duration // stream time a batch spans at most (default 1s)
	Grace    time.Duration // extra wait at the tail of a stream (default 250ms)
	AckWait  time.Duration // default 5m: longer than any insert
	// MinBackoff and MaxBackoff bound the retry delay while ClickHouse fails (100ms, 30s).
	MinBackoff, MaxBackoff time.Duration
	Registerer             prometheus.Registerer // default: none
	Log                    *slog.Logger

	// Check is how often a running recorder checks that its streams have not fallen behind
	// their consumers (default 30s).
	Check time.Duration
}

func (c Config) withDefaults() Config {
	if c.Durable == "" {
		c.Durable = "recorder"
	}
	if len(c.Streams) == 0 {
		c.Streams = []string{bus.Market, bus.Telemetry, bus.Fleet}
	}
	if c.MaxRows <= 0 {
		c.MaxRows = 50_000
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = time.Second
	}
	if c.Grace <= 0 {
		c.Grace = 250 * time.Millisecond
	}
	if c.AckWait <= 0 {
		c.AckWait = 5 * time.Minute
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.Check <= 0 {
		c.Check = 30 * time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// JetStream is what the recorder needs of the bus: its streams, its consumers, and the DLQ.
type JetStream interface {
	Stream(ctx context.Context, stream string) (jetstream.Stream, error)
	Consumer(ctx context.Context, stream, consumer string) (jetstream.Consumer, error)
	CreateOrUpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error)
	DeleteConsumer(ctx context.Context, stream, consumer string) error
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

var _ JetStream = jetstream.JetStream(nil)

// Recorder copies events from JetStream into the store.
type Recorder struct {
	js      JetStream
	store   Store
	cfg     Config
	metrics *metrics
}

// New returns a recorder; Run starts it.
func New(js JetStream, st Store, cfg Config) *Recorder {
	cfg = cfg.withDefaults()
	return &Recorder{js: js, store: st, cfg: cfg, metrics: newMetrics(cfg.Registerer)}
}

// Run records until ctx ends. Messages not in a committed and acked batch by then are
// redelivered to the next run.
func (r *Recorder) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.cfg.Streams))
	for i, stream := range r.cfg.Streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.runStream(ctx, stream)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *Recorder) consumerConfig(stream string) jetstream.ConsumerConfig {
	cfg := jetstream.ConsumerConfig{
		Durable:       r.cfg.Durable + "-" + strings.ToLower(stream),
		Description:   "Bursar recorder: events into ClickHouse",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       r.cfg.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: 4 * r.cfg.MaxRows,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	switch subs := r.cfg.Subjects[stream]; len(subs) {
	case 0:
	case 1:
		cfg.FilterSubject = subs[0]
	default:
		cfg.FilterSubjects = subs
	}
	return cfg
}

// consumer creates the stream's durable consumer, or resumes it after a run ended for reported
// (causeNone: the recorder is starting) where resumeFrom says, from the cursor (the last message
// a run stored, zero when unknown) and what the server says of the stream and the consumer. A
// consumer that resumes elsewhere than where it was is deleted and created again there. The
// restart is counted by its cause, and a stream found behind or renumbered here is logged as an
// error (a renumbered stream its run's loop found was logged there).
func (r *Recorder) consumer(ctx context.Context, stream string, cursor mark, reported cause) (jetstream.Consumer, error) {
	cc := r.consumerConfig(stream)
	res := resume{cause: reported, policy: cc.DeliverPolicy} // a new consumer reads the whole stream
	if old, err := r.js.Consumer(ctx, stream, cc.Durable); err == nil {
		info, err := old.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading consumer %s on %s: %w", cc.Durable, stream, err)
		}
		p, err := r.position(ctx, stream, info, cursor)
		if err != nil {
			return nil, err
		}
		res = resumeFrom(reported, cursor, p)
		log := r.cfg.Log.With("consumer", cc.Durable)
		switch {
		case res.found && res.cause == causeBehind:
			sayBehind(log, stream, p, res)
		case res.found && res.cause == causeRenumbered && reported != causeRenumbered:
			sayRenumbered(log, stream, cursor, p.atCursor)
		case !res.keep:
			log.Info("resuming after unacked deliveries", "stream", stream, "from", res.seq)
		}
		if res.keep {
			cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = info.Config.DeliverPolicy, info.Config.OptStartSeq, info.Config.OptStartTime
		} else {
			res.apply(&cc)
			if err := r.js.DeleteConsumer(ctx, stream, cc.Durable); err != nil {
				return nil, fmt.Errorf("resetting consumer %s on %s: %w", cc.Durable, stream, err)
			}
		}
	}
	r.metrics.restarted(stream, res.cause)
	cons, err := r.js.CreateOrUpdateConsumer(ctx, stream, cc)
	if err != nil {
		return nil, fmt.Errorf("creating consumer %s on %s: %w", cc.Durable, stream, err)
	}
	return cons, nil
}

// runStream records one stream until ctx ends. A run that a detector ends with a cause starts
// over, on a fresh iterator or a consumer recreated where resumeFrom says, from the stream's
// cursor: the last message stored.
//
// A restart that cannot read where to resume (the server answers 503 while a cluster elects a
// leader, a node is away) tries again with backoff, as a failed insert does: the recorder stops
// only on what fails when it starts.
func (r *Recorder) runStream(ctx context.Context, stream string) error {
	var cursor mark       // the last message a run stored
	reported := causeNone // why the last run ended
	delays := backoff.Policy{Min: r.cfg.MinBackoff, Max: r.cfg.MaxBackoff}
	failed := 0 // restarts in a row that could not resume
	for {
		sctx, restart := context.WithCancelCause(ctx)
		err := r.recordStream(sctx, restart, stream, &cursor, reported)
		var resuming *resumeError
		if errors.As(err, &resuming) && reported != causeNone && ctx.Err() == nil {
			restart(nil)
			if failed++; failed == 1 {
				r.cfg.Log.Warn("restarting the recorder's read failed; retrying with backoff", "stream", stream,
					"cause", reported, "err", err)
			}
			select {
			case <-time.After(delays.Delay(failed)):
				continue
			case <-ctx.Done():
				return nil
			}
		}
		failed = 0
		again := errors.As(context.Cause(sctx), &reported)
		restart(nil)
		if err != nil || ctx.Err() != nil || !again {
			return err
		}
	}
}

// resumeError is a failure to set up a run's consumer: reading where to resume, or creating it.
type resumeError struct{ err error }

func (e *resumeError) Error() string { return e.err.Error() }
func (e *resumeError) Unwrap() error { return e.err }

func (r *Recorder) recordStream(ctx context.Context, restart context.CancelCauseFunc, stream string, cursor *mark,
	reported cause) error {
	cons, err := r.consumer(ctx, stream, *cursor, reported)
	if err != nil {
		return &resumeError{err}
	}
	cc := r.consumerConfig(stream)
	l := &loop{r: r, stream: stream, durable: cc.Durable, log: r.cfg.Log.With("stream", stream),
		dec: newDecoder(), series: newSeries(), sizes: map[events.Type]int{}, restart: restart,
		delivery: cons.CachedInfo().Delivered.Consumer}
	defer func() {
		if s := l.stored.Load(); s != nil {
			*cursor = *s
		}
	}()
	if err := l.retry(ctx, "loading series state", func(ctx context.Context) error {
		return l.series.load(ctx, r.store)
	}); err != nil {
		return nil // ctx ended
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(min(r.cfg.MaxRows, 20_000)))
	if err != nil {
		return fmt.Errorf("consuming %s: %w", cc.Durable, err)
	}
	defer it.Stop()
	go r.watch(ctx, restart, l, cons)
	return l.run(ctx, it)
}
