package eventstest

import (
	"context"

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
