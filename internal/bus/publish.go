package bus

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/events"
)

// Publisher publishes events to JetStream with Nats-Msg-Id set from the event id, so a fact
// published twice within the duplicate window is stored once.
type Publisher struct {
	js jetstream.JetStream

	mu       sync.Mutex
	lost     func(Loss)
	top      map[string]uint64 // per stream, the highest sequence acknowledged to this publisher
	reported map[string]uint64 // per stream, the highest top told as lost
}

// NewPublisher returns a publisher over js.
func NewPublisher(js jetstream.JetStream) *Publisher { return &Publisher{js: js} }

// Loss is a stream that lost messages it had acknowledged to this publisher: it acknowledged
// a message with sequence Seq, sent after it had acknowledged one with sequence Top >= Seq.
// The messages it held from Seq (or before) to Top are gone (a damaged replica came back short
// and leads) and new ones were numbered the same. Nobody but the publisher can see it when nobody had read
// them yet: the stream and its consumers look whole.
type Loss struct {
	Stream   string
	Seq, Top uint64
}

func (l Loss) String() string {
	return fmt.Sprintf("stream %s lost messages it had acknowledged: it acknowledged sequence %d after %d "+
		"(a damaged replica came back short?); what it held at sequences %d to %d at least is gone, unless it was read before",
		l.Stream, l.Seq, l.Top, l.Seq, l.Top)
}

// OnLost has told, once for each loss, every Loss seen in the acknowledgements of Publish and
// PublishBatch (PublishAsync's are the caller's to read).
func (p *Publisher) OnLost(told func(Loss)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lost, p.top, p.reported = told, map[string]uint64{}, map[string]uint64{}
}

// tops is what each stream had acknowledged before a send: a message sent after those
// acknowledgements is stored after them, with a higher sequence, unless the stream lost them.
// It is nil while nobody listens for losses.
func (p *Publisher) tops() map[string]uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lost == nil {
		return nil
	}
	return maps.Clone(p.top)
}

// acked notes a's sequence and tells a loss when a came below what its stream had acknowledged
// before its message was sent (before, from tops).
func (p *Publisher) acked(before map[string]uint64, a *jetstream.PubAck) {
	if before == nil || a == nil || a.Duplicate { // a duplicate's sequence is its first copy's
		return
	}
	p.mu.Lock()
	p.top[a.Stream] = max(p.top[a.Stream], a.Sequence)
	top := before[a.Stream]
	tell := a.Sequence <= top && top > p.reported[a.Stream]
	if tell {
		p.reported[a.Stream] = top
	}
	told := p.lost
	p.mu.Unlock()
	if tell {
		told(Loss{Stream: a.Stream, Seq: a.Sequence, Top: top})
	}
}

// Publish encodes e and waits until JetStream has stored it (or dropped it as a duplicate),
// trying again while the stream gives no answer (see send).
func (p *Publisher) Publish(ctx context.Context, e events.Event) error {
	msg, err := message(e)
	if err != nil {
		return err
	}
	if err := p.send(ctx, msg, p.tops()); err != nil {
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
