package eventstest

import (
	"context"
	"testing"

	"github.com/bursar-dev/bursar/internal/events"
)

// PublishBatch records evs as a consumer receives them from the bus: encoded into batch
// messages with events.Batches and decoded back with events.DecodeAll, each event once. It fails
// with the failure set with SetFail, or when the events do not make valid messages.
func (p *Publisher[T]) PublishBatch(_ context.Context, evs []events.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	msgs, err := events.Batches(evs, events.BatchLimits{})
	if err != nil {
		return err
	}
	var got []T
	for _, m := range msgs {
		back, err := events.DecodeAll(m.Data)
		if err != nil {
			return err
		}
		for _, e := range back {
			got = append(got, e.(T))
		}
	}
	p.got = append(p.got, got...)
	return nil
}

// Batch encodes evs, which must share a subject, as one batch message, failing tb otherwise.
func Batch(tb testing.TB, evs []events.Event) []byte {
	tb.Helper()
	msgs, err := events.Batches(evs, events.BatchLimits{})
	if err != nil {
		tb.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Events != len(evs) {
		tb.Fatalf("Batches made %d messages, want one of %d events", len(msgs), len(evs))
	}
	return msgs[0].Data
}
