package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/events"
)

// maxBatchBytes caps one batch message: a quarter of the streams' default largest message (1
// MiB, Options.MaxPayloadPerMsg), so headers and a larger event never push a batch over it.
const maxBatchBytes = 256 << 10

// PublishBatch publishes many events at once, as a source that reads them together (a node's GPU
// sweep, a price catalog, a scrape of many replicas) has them: one batch message per subject
// (see events.DecodeAll), cut well under the largest message the server and streams take, each
// with its Nats-Msg-Id derived from its events' ids. It waits until JetStream stored every message
// (or dropped it as a duplicate); the error names the subjects that failed.
func (p *Publisher) PublishBatch(ctx context.Context, evs []events.Event) error {
	msgs, err := events.Batches(evs, p.batchLimits())
	if err != nil {
		return fmt.Errorf("encoding a batch: %w", err)
	}
	before := p.tops()
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		msg := &nats.Msg{Subject: m.Subject, Data: m.Data, Header: nats.Header{jetstream.MsgIDHeader: []string{m.ID}}}
		if futures[i], err = p.js.PublishMsgAsync(msg); err != nil {
			return fmt.Errorf("publishing %d events to %s: %w", m.Events, m.Subject, err)
		}
	}
	var errs []error
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			p.acked(before, ack)
		case err := <-f.Err():
			if unanswered(err) { // tried again on its own, under its id
				err = p.send(ctx, f.Msg(), before)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("publishing %d events to %s: %w", msgs[i].Events, msgs[i].Subject, err))
			}
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d of %d batch messages: %w", len(futures)-i, len(futures), ctx.Err())
		}
	}
	return errors.Join(errs...)
}

// batchLimits keeps a batch within a quarter of what this connection's server accepts too.
func (p *Publisher) batchLimits() events.BatchLimits {
	lim := events.BatchLimits{MaxBytes: maxBatchBytes}
	if nc := p.js.Conn(); nc != nil {
		if server := int(nc.MaxPayload()); server > 0 {
			lim.MaxBytes = min(lim.MaxBytes, server/4)
		}
	}
	return lim
}
