package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/events"
)

// Handler handles one decoded event. Returning nil acks the message. An error marked with
// Permanent sends the message to DLQ and terminates it; any other error is taken as transient and
// the message is redelivered after a backoff.
//
// A batch message (events.DecodeAll) is handed over one event at a time, in order, and acked only
// when every event succeeded. A transient error stops at that event and redelivers the whole
// message, so the events before it are handled again: handlers must be idempotent by event id,
// as redelivery already requires. A permanent error of one event does not stop its siblings:
// the others are still handled, then the whole message goes to DLQ with the failed events'
// indexes and ids in its reason.
type Handler func(ctx context.Context, e events.Event) error

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent marks err as one that redelivery cannot fix: the message goes to DLQ.
func Permanent(err error) error { return permanentError{err} }

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool { return errors.As(err, new(permanentError)) }

// ConsumerSpec describes a durable consumer on one stream.
type ConsumerSpec struct {
	Stream   string
	Durable  string
	Subjects []string      // filter; empty for the whole stream
	AckWait  time.Duration // default 30s
	// GiveUpAfter sends a message to DLQ once it failed this many deliveries; 0 never gives up.
	GiveUpAfter int
	MinBackoff  time.Duration // ceiling of the first redelivery delay, jittered (default 100ms)
	MaxBackoff  time.Duration // cap on the delay (default 30s)
	// DeliverNew starts a new consumer at the end of the stream instead of its beginning.
	DeliverNew bool
}

func (s ConsumerSpec) config() jetstream.ConsumerConfig {
	cfg := jetstream.ConsumerConfig{
		Durable: s.Durable, AckPolicy: jetstream.AckExplicitPolicy, AckWait: s.AckWait,
		MaxDeliver: -1, MaxAckPending: 4096,
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	if s.DeliverNew {
		cfg.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	switch len(s.Subjects) {
	case 0:
	case 1:
		cfg.FilterSubject = s.Subjects[0]
	default:
		cfg.FilterSubjects = s.Subjects
	}
	return cfg
}

// redeliveryDelay is the wait before a message that failed delivered times comes back. It is
// jittered, so the messages that failed together (a store outage) do not all return at once.
func (s ConsumerSpec) redeliveryDelay(delivered uint64) time.Duration {
	p := backoff.Policy{Min: s.MinBackoff, Max: s.MaxBackoff}
	if p.Min <= 0 {
		p.Min = 100 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 30 * time.Second
	}
	return p.Delay(int(min(delivered, 64))) // 2^63 is past any cap
}

// Consumer runs a Handler over a durable consumer.
type Consumer struct {
	js   jetstream.JetStream
	spec ConsumerSpec
	h    Handler
	log  *slog.Logger
}

// NewConsumer returns a consumer; Run starts it.
func NewConsumer(js jetstream.JetStream, spec ConsumerSpec, h Handler, log *slog.Logger) *Consumer {
	return &Consumer{js: js, spec: spec, h: h, log: log.With("consumer", spec.Durable)}
}

// Run consumes until ctx ends, then drains: messages already delivered are handled and acked
// before Run returns.
func (c *Consumer) Run(ctx context.Context) error {
	cons, err := c.js.CreateOrUpdateConsumer(ctx, c.spec.Stream, c.spec.config())
	if err != nil {
		return fmt.Errorf("creating consumer %s on %s: %w", c.spec.Durable, c.spec.Stream, err)
	}
	// Handlers get a context that outlives ctx by the drain, so in-flight work can finish.
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	cc, err := cons.Consume(func(m jetstream.Msg) { c.handle(work, m) })
	if err != nil {
		return fmt.Errorf("consuming %s: %w", c.spec.Durable, err)
	}
	<-ctx.Done()
	cc.Drain()
	select {
	case <-cc.Closed():
	case <-time.After(c.spec.config().AckWait):
		c.log.Warn("drain timed out; unacked messages will be redelivered")
	}
	return nil
}

func (c *Consumer) handle(ctx context.Context, m jetstream.Msg) {
	evs, err := events.DecodeAll(m.Data())
	if err != nil {
		c.deadLetter(ctx, m, fmt.Sprintf("decode: %v", err))
		return
	}
	var poison []string
	for i, e := range evs {
		err := c.h(ctx, e)
		switch {
		case err == nil:
		case IsPermanent(err):
			poison = append(poison, fmt.Sprintf("%s: %v", eventAt(evs, i), err))
		default:
			c.retry(ctx, m, e, err)
			return
		}
	}
	if len(poison) > 0 {
		c.deadLetter(ctx, m, "handler: "+strings.Join(poison, "; "))
		return
	}
	if err := m.Ack(); err != nil {
		c.log.Warn("ack failed; the message will be redelivered", "id", evs[0].Header().ID, "events", len(evs), "err", err)
	}
}

// eventAt names event i of a message for a DLQ reason: just its id when it came alone.
func eventAt(evs []events.Event, i int) string {
	if len(evs) == 1 {
		return "event " + evs[0].Header().ID
	}
	return fmt.Sprintf("events[%d] %s", i, evs[i].Header().ID)
}

// retry redelivers m after a transient failure of its event e, or sends it to DLQ once it
// failed GiveUpAfter deliveries.
func (c *Consumer) retry(ctx context.Context, m jetstream.Msg, e events.Event, err error) {
	delivered := deliveries(m)
	if c.spec.GiveUpAfter > 0 && delivered >= uint64(c.spec.GiveUpAfter) {
		c.deadLetter(ctx, m, fmt.Sprintf("gave up after %d deliveries: %v", delivered, err))
		return
	}
	delay := c.spec.redeliveryDelay(delivered)
	c.log.Debug("handler failed; redelivering", "id", e.Header().ID, "delivery", delivered,
		"delay", delay, "err", err)
	_ = m.NakWithDelay(delay)
}

// deadLetter copies m to DLQ with its subject and the reason, then terminates it. If the copy
// cannot be stored, m is redelivered later instead: nothing is lost.
func (c *Consumer) deadLetter(ctx context.Context, m jetstream.Msg, reason string) {
	dead, opts := DeadLetter(m, c.spec.Stream, reason)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.js.PublishMsg(pctx, dead, opts...); err != nil {
		c.log.Error("could not store a dead message in DLQ; will retry", "subject", m.Subject(), "err", err)
		_ = m.NakWithDelay(c.spec.redeliveryDelay(deliveries(m)))
		return
	}
	c.log.Warn("message sent to DLQ", "subject", m.Subject(), "reason", reason)
	_ = m.TermWithReason(reason)
}

func deliveries(m jetstream.Msg) uint64 {
	md, err := m.Metadata()
	if err != nil {
		return 1
	}
	return md.NumDelivered
}

// DeadLetter builds the DLQ copy of m: the original subject, stream and reason in headers, and a
// message id from m's stream sequence, so a copy stored twice (a retry, a redelivery) is kept once.
func DeadLetter(m jetstream.Msg, stream, reason string) (*nats.Msg, []jetstream.PublishOpt) {
	dead := &nats.Msg{Subject: dlqPrefix + m.Subject(), Data: m.Data(), Header: nats.Header{}}
	dead.Header.Set(HeaderOriginalSubject, m.Subject())
	dead.Header.Set(HeaderReason, reason)
	dead.Header.Set(HeaderStream, stream)
	var opts []jetstream.PublishOpt
	if md, err := m.Metadata(); err == nil {
		opts = append(opts, jetstream.WithMsgID(fmt.Sprintf("dlq:%s:%d", md.Stream, md.Sequence.Stream)))
	}
	return dead, opts
}
