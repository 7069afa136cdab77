package bus_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

var at = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// recorder is a Handler that keeps what it saw and can fail on purpose.
type recorder struct {
	mu   sync.Mutex
	got  []events.Event
	fail func(events.Event, int) error // called with the event and how often it was seen before
	seen map[string]int
	ch   chan events.Event
}

func newRecorder() *recorder {
	return &recorder{seen: map[string]int{}, ch: make(chan events.Event, 1024)}
}

func (r *recorder) handle(_ context.Context, e events.Event) error {
	r.mu.Lock()
	n := r.seen[e.Header().ID]
	r.seen[e.Header().ID]++
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		if err := fail(e, n); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.got = append(r.got, e)
	r.mu.Unlock()
	r.ch <- e
	return nil
}

func (r *recorder) wait(t *testing.T, n int) []events.Event {
	t.Helper()
	var out []events.Event
	for len(out) < n {
		select {
		case e := <-r.ch:
			out = append(out, e)
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d events, want %d", len(out), n)
		}
	}
	return out
}

func run(t *testing.T, env *bustest.Env, spec bus.ConsumerSpec, h bus.Handler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bus.NewConsumer(env.JS, spec, h, slog.New(slog.DiscardHandler)).Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("consumer: %v", err)
		}
	})
}

func TestEveryTypeRoundTripsThroughJetStream(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	pub := bus.NewPublisher(env.JS)
	sent := eventstest.Samples(at, 1)
	streams := map[string]bool{}
	rec := newRecorder()
	for _, s := range []string{bus.Market, bus.Telemetry, bus.Fleet} {
		run(t, env, bus.ConsumerSpec{Stream: s, Durable: "test-" + s}, rec.handle)
	}
	for _, e := range sent {
		if err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.wait(t, len(sent))
	byID := map[string]events.Event{}
	for _, e := range got {
		byID[e.Header().ID] = e
	}
	for _, want := range sent {
		g, ok := byID[want.Header().ID]
		if !ok {
			t.Errorf("%s never arrived", want.EventType())
			continue
		}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("%s changed in transit:\n got %#v\nwant %#v", want.EventType(), g, want)
		}
	}
	for _, cfg := range bus.Streams(bus.Options{}) {
		streams[cfg.Name] = true
	}
	if len(streams) != 4 {
		t.Errorf("streams = %v, want MARKET, TELEMETRY, FLEET and DLQ", streams)
	}
}

func TestDuplicatePublishIsSeenOnce(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	pub := bus.NewPublisher(env.JS)
	rec := newRecorder()
	run(t, env, bus.ConsumerSpec{Stream: bus.Market, Durable: "dups"}, rec.handle)

	first := eventstest.Samples(at, 1)[0]
	again := eventstest.Samples(at, 1)[0] // the same fact, built anew: same id
	marker := eventstest.Samples(at, 2)[0]
	for _, e := range []events.Event{first, again, marker} {
		if err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.wait(t, 2)
	if got[0].Header().ID != first.Header().ID || got[1].Header().ID != marker.Header().ID {
		t.Fatalf("got ids %s, %s; want the event once, then the marker", got[0].Header().ID, got[1].Header().ID)
	}
	info, err := env.JS.Stream(ctx, bus.Market)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Msgs; n != 2 {
		t.Errorf("MARKET holds %d messages, want 2", n)
	}
}

func TestGarbageGoesToDLQAndConsumerGoesOn(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	rec := newRecorder()
	run(t, env, bus.ConsumerSpec{Stream: bus.Market, Durable: "garbage"}, rec.handle)

	if _, err := env.JS.Publish(ctx, "bursar.price.aws.us-east-1", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	bad := `{"type":"price.observed","version":"1.0","id":"x","at":"2026-11-30T06:00:00Z","provider":"aws","region":"r","instance_type":"i","gpu_model":"H100-80GB","gpu_count":1,"gpu_memory_gb":80,"market":"spot","usd_per_hour":-3,"source":"s"}`
	if _, err := env.JS.Publish(ctx, "bursar.price.aws.us-east-1", []byte(bad)); err != nil {
		t.Fatal(err)
	}
	good := eventstest.Samples(at, 1)[0]
	if err := bus.NewPublisher(env.JS).Publish(ctx, good); err != nil {
		t.Fatal(err)
	}
	if got := rec.wait(t, 1); got[0].Header().ID != good.Header().ID {
		t.Fatalf("consumer got %s, want the good event after the garbage", got[0].Header().ID)
	}
	dead := fetchDLQ(t, env, 2)
	wantReasons := []string{"malformed event", `field "usd_per_hour": value out of range`}
	for i, m := range dead {
		if s := m.Headers().Get(bus.HeaderOriginalSubject); s != "bursar.price.aws.us-east-1" {
			t.Errorf("dead message %d: original subject %q", i, s)
		}
		if r := m.Headers().Get(bus.HeaderReason); !strings.Contains(r, wantReasons[i]) {
			t.Errorf("dead message %d: reason %q does not contain %q", i, r, wantReasons[i])
		}
	}
}

func TestTransientErrorsAreRetriedAndPermanentOnesDeadLettered(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	rec := newRecorder()
	samples := eventstest.Samples(at, 1)
	flaky, poison := samples[0], samples[1]
	rec.fail = func(e events.Event, seenBefore int) error {
		switch e.Header().ID {
		case flaky.Header().ID:
			if seenBefore < 2 {
				return errors.New("store is down")
			}
		case poison.Header().ID:
			return bus.Permanent(errors.New("no such location"))
		}
		return nil
	}
	run(t, env, bus.ConsumerSpec{Stream: bus.Market, Durable: "flaky", MinBackoff: 10 * time.Millisecond}, rec.handle)
	pub := bus.NewPublisher(env.JS)
	for _, e := range []events.Event{poison, flaky} {
		if err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if got := rec.wait(t, 1); got[0].Header().ID != flaky.Header().ID {
		t.Fatalf("got %s, want the flaky event after its retries", got[0].Header().ID)
	}
	rec.mu.Lock()
	tries := rec.seen[flaky.Header().ID]
	rec.mu.Unlock()
	if tries != 3 {
		t.Errorf("flaky event handled %d times, want 3", tries)
	}
	dead := fetchDLQ(t, env, 1)
	if r := dead[0].Headers().Get(bus.HeaderReason); !strings.Contains(r, "no such location") {
		t.Errorf("reason %q", r)
	}
}

func TestEnsureIsIdempotent(t *testing.T) {
	env := bustest.Start(t) // already ran Ensure once
	ctx := context.Background()
	for range 2 {
		if err := bus.Ensure(ctx, env.JS, bus.Options{}); err != nil {
			t.Fatalf("second Ensure: %v", err)
		}
	}
	for _, cfg := range bus.Streams(bus.Options{}) {
		s, err := env.JS.Stream(ctx, cfg.Name)
		if err != nil {
			t.Fatalf("stream %s: %v", cfg.Name, err)
		}
		if got := s.CachedInfo().Config.Duplicates; got != 10*time.Minute {
			t.Errorf("%s duplicate window = %v, want 10m", cfg.Name, got)
		}
	}
	kv, err := env.JS.KeyValue(ctx, bus.BucketBudgets)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := kv.Status(ctx); st.History() != 64 {
		t.Errorf("budget history = %d, want 64", st.History())
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://alice:s3cret@nats.example:4222", "nats://REDACTED@nats.example:4222"},
		{"nats://tok3n@nats.example:4222", "nats://REDACTED@nats.example:4222"},
		{"::nope", "(unparseable URL)"},
	}
	for _, tt := range tests {
		if got := bus.Redact(tt.in); got != tt.want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConnectErrorHidesCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _, err := bus.Connect(ctx, "nats://alice:s3cret@127.0.0.1:1", "t", slog.New(slog.DiscardHandler))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v; want an error without the password", err)
	}
}

func fetchDLQ(t *testing.T, env *bustest.Env, n int) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := env.JS.CreateOrUpdateConsumer(ctx, bus.DLQ, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for len(out) < n {
		batch, err := cons.Fetch(n-len(out), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			out = append(out, m)
		}
		if ctx.Err() != nil {
			t.Fatalf("DLQ holds %d messages, want %d", len(out), n)
		}
	}
	return out
}
