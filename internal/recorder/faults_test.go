package recorder

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nats-io/nats.go/jetstream"
)

// Faults are injected by wrapping what the recorder uses, the bus and the store, never by
// switches in Config: the real NATS server and the real engine run behind them.

// faultyBus is the real bus whose consumers hand the loop what deliver makes of each delivery:
// the message itself, one that fails in some way, or nil for a delivery lost on its way (a route
// cut between the consumer's leader and the recorder's server drops it). Its first deaf reads
// never ask the server for messages, as a read whose pull request a consumer leader change lost.
type faultyBus struct {
	JetStream
	deliver func(jetstream.Msg) jetstream.Msg // nil: every message as it comes
	deaf    atomic.Int64
	// failOnResume is how many reads of a stream fail, as a server electing a leader answers
	// (503), once a restart first finds its consumer; streamFails counts them down.
	failOnResume, streamFails atomic.Int64
}

// errUnavailable is what a JetStream server answers while its cluster elects a leader.
var errUnavailable = errors.New("nats: API error: code=503 err_code=10008 description=JetStream system temporarily unavailable")

func (b *faultyBus) Consumer(ctx context.Context, stream, name string) (jetstream.Consumer, error) {
	c, err := b.JetStream.Consumer(ctx, stream, name)
	if err == nil {
		if n := b.failOnResume.Swap(0); n > 0 {
			b.streamFails.Store(n)
		}
	}
	return c, err
}

func (b *faultyBus) Stream(ctx context.Context, stream string) (jetstream.Stream, error) {
	for n := b.streamFails.Load(); n > 0; n = b.streamFails.Load() {
		if b.streamFails.CompareAndSwap(n, n-1) {
			return nil, errUnavailable
		}
	}
	return b.JetStream.Stream(ctx, stream)
}

func (b *faultyBus) CreateOrUpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := b.JetStream.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, err
	}
	return &faultyConsumer{Consumer: c, bus: b}, nil
}

type faultyConsumer struct {
	jetstream.Consumer
	bus *faultyBus
}

func (c *faultyConsumer) Messages(opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, error) {
	if c.bus.deaf.Add(-1) >= 0 {
		return deafMessages{}, nil
	}
	if c.bus.deliver == nil {
		return c.Consumer.Messages(opts...)
	}
	it, err := c.Consumer.Messages(opts...)
	if err != nil {
		return nil, err
	}
	return &faultyMessages{MessagesContext: it, deliver: c.bus.deliver}, nil
}

type faultyMessages struct {
	jetstream.MessagesContext
	deliver func(jetstream.Msg) jetstream.Msg
}

func (it *faultyMessages) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) {
	for {
		m, err := it.MessagesContext.Next(opts...)
		if err != nil {
			return nil, err
		}
		if m = it.deliver(m); m != nil {
			return m, nil
		}
	}
}

// deafMessages is a read that waits for messages it never asked for.
type deafMessages struct{}

func (deafMessages) Next(...jetstream.NextOpt) (jetstream.Msg, error) {
	time.Sleep(50 * time.Millisecond)
	return nil, nats.ErrTimeout
}
func (deafMessages) Stop()  {}
func (deafMessages) Drain() {}

// ackLost is a delivery whose ack is lost on its way, as a node restarting drops it: acks are
// sent without waiting for a reply, so the recorder cannot tell.
type ackLost struct {
	jetstream.Msg
	lost *atomic.Int64 // acks lost
}

func (m ackLost) Ack() error {
	m.lost.Add(1)
	return nil
}

// crashing is the real store in a recorder that dies in the middle of each consumer's first batch:
// once after of its tables committed (-1: all of them), no other insert commits, and none returns
// until the recorder stops, so nothing is acked. The batch is told by its token, which starts with
// the consumer's name.
type crashing struct {
	Store
	after int

	mu      sync.Mutex
	first   map[string]string // each consumer's first batch token
	commits map[string]int    // the inserts of it committed
}

func newCrashing(st Store, after int) *crashing {
	return &crashing{Store: st, after: after, first: map[string]string{}, commits: map[string]int{}}
}

func (c *crashing) Insert(ctx context.Context, table, columns, token string, rows []byte) error {
	if c.commit(token) {
		if err := c.Store.Insert(ctx, table, columns, token, rows); err != nil {
			return err
		}
	}
	<-ctx.Done() // the recorder dies before it hears back
	return ctx.Err()
}

// commit says whether an insert under token commits before the crash.
func (c *crashing) commit(token string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	durable, _, _ := strings.Cut(token, ":")
	if c.first[durable] == "" {
		c.first[durable] = token
	}
	if token != c.first[durable] {
		return false
	}
	if c.after < 0 {
		return true
	}
	c.commits[durable]++
	return c.commits[durable] <= c.after
}
