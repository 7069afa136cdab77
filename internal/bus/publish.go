package bus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/events"
)

// Publisher publishes events to JetStream with Nats-Msg-Id set from the event id, so a fact
// published twice within the duplicate window is stored once.
type Publisher struct {
	js jetstream.JetStream
}

// NewPublisher returns a publisher over js.
func NewPublisher(js jetstream.JetStream) *Publisher { return &Publisher{js: js} }

// Publish encodes e and waits until JetStream has stored it (or dropped it as a duplicate),
// trying again while the stream gives no answer (see send).
func (p *Publisher) Publish(ctx context.Context, e events.Event) error {
	msg, err := message(e)
	if err != nil {
		return err
	}
	if err := p.send(ctx, msg); err != nil {
		return fmt.Errorf("publishing %s %s to %s: %w", e.EventType(), e.Header().ID, msg.Subject, err)
	}
	return nil
}

// PublishAsync encodes e and sends it without waiting for the store's acknowledgement; call Flush
// to wait for every pending one. For sources that publish many events at once.
func (p *Publisher) PublishAsync(e events.Event) (jetstream.PubAckFuture, error) {
	msg, err := message(e)
	if err != nil {
		return nil, err
	}
	f, err := p.js.PublishMsgAsync(msg)
	if err != nil {
		return nil, fmt.Errorf("publishing %s %s to %s: %w", e.EventType(), e.Header().ID, msg.Subject, err)
	}
	return f, nil
}

// Flush waits until every asynchronous publish is acknowledged, or ctx ends.
func (p *Publisher) Flush(ctx context.Context) error {
	select {
	case <-p.js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %d pending publishes: %w", p.js.PublishAsyncPending(), ctx.Err())
	}
}

// message encodes e into a message whose header already carries e's id as Nats-Msg-Id, which is
// all jetstream.WithMsgID would add: publishing it without options spares each message the
// option closure, the options struct and a second header write.
func message(e events.Event) (*nats.Msg, error) {
	data, err := events.Encode(e)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", e.EventType(), err)
	}
	h := nats.Header{jetstream.MsgIDHeader: []string{e.Header().ID}}
	return &nats.Msg{Subject: e.Subject(), Data: data, Header: h}, nil
}
