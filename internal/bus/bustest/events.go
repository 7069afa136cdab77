package bustest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/events"
)

// Events reads every event stream holds on subject (a filter), in order.
func Events(tb testing.TB, js jetstream.JetStream, stream, subject string) []events.Event {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, c := range info.State.Subjects {
		n += int(c)
	}
	if n == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		tb.Fatal(err)
	}
	batch, err := cons.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		tb.Fatal(err)
	}
	var out []events.Event
	for m := range batch.Messages() {
		e, err := events.Decode(m.Data())
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, e)
	}
	if len(out) != n {
		tb.Fatalf("read %d of the %d events on %s", len(out), n, subject)
	}
	return out
}
