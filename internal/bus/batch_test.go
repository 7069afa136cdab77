package bus_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// stored returns the payloads a stream holds, in order.
func stored(t *testing.T, env *bustest.Env, stream string) [][]byte {
	t.Helper()
	ctx := context.Background()
	s, err := env.JS.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Data)
	}
	return out
}

func TestPublishBatchIsHandedOverEventByEvent(t *testing.T) {
	env := bustest.Start(t)
	rec := newRecorder()
	run(t, env, bus.ConsumerSpec{Stream: bus.Telemetry, Durable: "batch"}, rec.handle)
	run(t, env, bus.ConsumerSpec{Stream: bus.Market, Durable: "batch"}, rec.handle)
	price := eventstest.Samples(at, 1)[0]
	sent := append(append(eventstest.Sweep("node-a", 8, at), eventstest.Sweep("node-b", 3, at)...), price)
	if err := bus.NewPublisher(env.JS).PublishBatch(context.Background(), sent); err != nil {
		t.Fatal(err)
	}
	got := map[string]events.Event{}
	for _, e := range rec.wait(t, len(sent)) {
		got[e.Header().ID] = e
	}
	for _, want := range sent {
		if !reflect.DeepEqual(got[want.Header().ID], want) {
			t.Errorf("%s %s: handed %v", want.EventType(), want.Header().ID, got[want.Header().ID])
		}
	}
	if n := len(stored(t, env, bus.Telemetry)); n != 2 {
		t.Errorf("TELEMETRY holds %d messages, want one batch per node", n)
	}
	if n := len(stored(t, env, bus.Market)); n != 1 {
		t.Errorf("MARKET holds %d messages, want the price alone", n)
	}
}

func TestPublishBatchTwiceIsStoredOnce(t *testing.T) {
	env := bustest.Start(t)
	pub := bus.NewPublisher(env.JS)
	for range 2 {
		if err := pub.PublishBatch(context.Background(), eventstest.Sweep("node-a", 8, at)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(stored(t, env, bus.Telemetry)); n != 1 {
		t.Errorf("TELEMETRY holds %d messages after the same sweep twice, want 1", n)
	}
}

func TestPublishBatchCutsLargeBatchesWellUnderTheLimit(t *testing.T) {
	env := bustest.Start(t)
	sent := eventstest.Sweep("node-a", 3000, at)
	if err := bus.NewPublisher(env.JS).PublishBatch(context.Background(), sent); err != nil {
		t.Fatal(err)
	}
	limit := int(bus.Streams(bus.Options{})[1].MaxMsgSize) / 4
	msgs := stored(t, env, bus.Telemetry)
	var back []events.Event
	for i, data := range msgs {
		if len(data) > limit {
			t.Errorf("message %d is %d bytes, over a quarter of the stream's largest (%d)", i, len(data), limit)
		}
		evs, err := events.DecodeAll(data)
		if err != nil {
			t.Fatal(err)
		}
		back = append(back, evs...)
	}
	if len(msgs) < 2 || !reflect.DeepEqual(back, sent) {
		t.Errorf("%d messages holding %d events, want several holding the %d sent in order", len(msgs), len(back), len(sent))
	}
}

func TestABatchWithAPoisonEventHandlesTheOthersThenDeadLetters(t *testing.T) {
	env := bustest.Start(t)
	evs := eventstest.Sweep("node-a", 3, at)
	poison := evs[1].Header().ID
	rec := newRecorder()
	rec.fail = func(e events.Event, _ int) error {
		if e.Header().ID == poison {
			return bus.Permanent(errors.New("no such node"))
		}
		return nil
	}
	run(t, env, bus.ConsumerSpec{Stream: bus.Telemetry, Durable: "poison"}, rec.handle)
	if err := bus.NewPublisher(env.JS).PublishBatch(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	got := rec.wait(t, 2)
	if got[0].Header().ID != evs[0].Header().ID || got[1].Header().ID != evs[2].Header().ID {
		t.Errorf("handled %s, %s; want events 0 and 2", got[0].Header().ID, got[1].Header().ID)
	}
	dead := fetchDLQ(t, env, 1)
	if r := dead[0].Headers().Get(bus.HeaderReason); !strings.Contains(r, "events[1] "+poison) || !strings.Contains(r, "no such node") {
		t.Errorf("DLQ reason %q does not name events[1] and why", r)
	}
	if all, err := events.DecodeAll(dead[0].Data()); err != nil || len(all) != 3 {
		t.Errorf("DLQ holds %d events (%v), want the whole batch", len(all), err)
	}
}

func TestATransientFailureRedeliversTheWholeBatch(t *testing.T) {
	env := bustest.Start(t)
	evs := eventstest.Sweep("node-a", 3, at)
	rec := newRecorder()
	rec.fail = func(e events.Event, seenBefore int) error {
		if e.Header().ID == evs[2].Header().ID && seenBefore == 0 {
			return errors.New("store is down")
		}
		return nil
	}
	run(t, env, bus.ConsumerSpec{Stream: bus.Telemetry, Durable: "flaky", MinBackoff: 10 * time.Millisecond}, rec.handle)
	if err := bus.NewPublisher(env.JS).PublishBatch(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range rec.wait(t, 5) {
		ids = append(ids, e.Header().ID)
	}
	want := []string{evs[0].Header().ID, evs[1].Header().ID, evs[0].Header().ID, evs[1].Header().ID, evs[2].Header().ID}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("handled %v, want events 0 and 1, then the redelivered batch whole", ids)
	}
	waitAcked(t, env, bus.Telemetry, "flaky")
}

// waitAcked waits until the consumer has nothing pending or unacked.
func waitAcked(t *testing.T, env *bustest.Env, stream, durable string) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := env.JS.Consumer(ctx, stream, durable)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 && info.AckFloor.Stream > 0 {
			return
		}
	}
	t.Fatalf("consumer %s never acked the batch", durable)
}
