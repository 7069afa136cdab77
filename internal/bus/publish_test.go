package bus_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// TestPublishSendsTheEventID: both ways of publishing put the event's id in Nats-Msg-Id, so a
// fact published twice is stored once.
func TestPublishSendsTheEventID(t *testing.T) {
	tests := []struct {
		name    string
		publish func(ctx context.Context, p *bus.Publisher, e events.Event) error
	}{
		{"Publish", func(ctx context.Context, p *bus.Publisher, e events.Event) error {
			return p.Publish(ctx, e)
		}},
		{"PublishAsync", func(ctx context.Context, p *bus.Publisher, e events.Event) error {
			if _, err := p.PublishAsync(e); err != nil {
				return err
			}
			return p.Flush(ctx)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := bustest.Start(t)
			ctx := context.Background()
			pub := bus.NewPublisher(env.JS)
			first := eventstest.Samples(at, 1)[0]
			again := eventstest.Samples(at, 1)[0] // the same fact, built anew: same id
			for _, e := range []events.Event{first, again} {
				if err := tt.publish(ctx, pub, e); err != nil {
					t.Fatal(err)
				}
			}
			s, err := env.JS.Stream(ctx, bus.Market)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := s.GetLastMsgForSubject(ctx, first.Subject())
			if err != nil {
				t.Fatal(err)
			}
			if got := msg.Header.Get(jetstream.MsgIDHeader); got != first.Header().ID {
				t.Errorf("Nats-Msg-Id = %q, want the event id %q", got, first.Header().ID)
			}
			if msg.Sequence != 1 {
				t.Errorf("the stored message has sequence %d, want 1: the repeat was stored too", msg.Sequence)
			}
		})
	}
}
