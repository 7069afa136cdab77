//go:build linux && cgo && nvml

package gpu

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
)

func TestCollectorPublishesTheMockedDGXH100ToJetStream(t *testing.T) {
	env := bustest.Start(t)
	at := time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
	c, err := New(Config{Location: "aws-use1", Node: "dgx-1", Interval: time.Hour}, Deps{
		Publisher: bus.NewPublisher(env.JS), Now: func() time.Time { return at },
		Open: func() (Reader, error) { return OpenNVMLWith(mockDGXH100(t, false)) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }() // samples once at start, then hourly

	cons, err := env.JS.OrderedConsumer(context.Background(), bus.Telemetry,
		jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.gpu.aws-use1.dgx-1"}})
	if err != nil {
		t.Fatal(err)
	}
	// The sweep is one batch message holding all eight samples.
	m, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := events.DecodeAll(m.Data())
	if err != nil {
		t.Fatal(err)
	}
	var got []*events.GPUSample
	for _, e := range evs {
		got = append(got, e.(*events.GPUSample))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 {
		t.Fatalf("the first message holds %d samples, want the sweep's 8", len(got))
	}
	if n := streamMsgs(t, env); n != 1 {
		t.Errorf("TELEMETRY holds %d messages, want the sweep as one", n)
	}
	uuids := map[string]bool{}
	for _, s := range got {
		uuids[s.UUID] = true
		if s.Model != "H100-80GB" || !s.At.Equal(at) || s.MemoryTotalBytes != 85899345920 ||
			s.PowerW != float64(300+s.Index) || s.UtilizationPct != float64(10*s.Index) {
			t.Errorf("sample %+v", s)
		}
	}
	if len(uuids) != 8 {
		t.Errorf("%d distinct GPUs, want 8", len(uuids))
	}
}

func streamMsgs(t *testing.T, env *bustest.Env) uint64 {
	t.Helper()
	s, err := env.JS.Stream(context.Background(), bus.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}
