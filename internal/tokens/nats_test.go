package tokens

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
)

func TestScraperPublishesTokenCountsToJetStreamAcrossAReset(t *testing.T) {
	env := bustest.Start(t)
	fv, v := newFakeServer(t, fixture(t, "vllm-metrics.txt"))
	_, g := newFakeServer(t, fixture(t, "tgi-metrics.txt"))
	now := time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
	s, err := New(Config{Targets: []Target{
		{URL: v.URL + "/metrics", Server: VLLM, Location: "aws-use1", Workload: "llama-8b", Replica: "llama-8b-0"},
		{URL: g.URL + "/metrics", Server: TGI, Location: "aws-use1", Workload: "llama-70b", Replica: "llama-70b-0"},
	}}, Deps{Publisher: bus.NewPublisher(env.JS), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	scrape := func(i int) {
		t.Helper()
		if _, err := s.Scrape(context.Background(), i); err != nil {
			t.Fatal(err)
		}
		now = now.Add(30 * time.Second)
	}
	scrape(0)
	scrape(1)
	fv.set(func(f *fakeServer) { f.page = fixture(t, "vllm-metrics-v0-legacy.txt") }) // restarted on an older build
	scrape(0)

	want := []events.TokensSample{
		{Replica: "llama-8b-0", Server: "vllm", PromptTokens: 2987112, GenerationTokens: 845233, Requests: 4330},
		{Replica: "llama-70b-0", Server: "tgi", PromptTokens: 611934, GenerationTokens: 281007, Requests: 1520},
		{Replica: "llama-8b-0", Server: "vllm", PromptTokens: 120443, GenerationTokens: 40117, Requests: 323, Reset: true},
	}
	got := stored(t, env, len(want))
	for i, e := range got {
		w := want[i]
		if e.Replica != w.Replica || e.Server != w.Server || e.PromptTokens != w.PromptTokens ||
			e.GenerationTokens != w.GenerationTokens || e.Requests != w.Requests || e.Reset != w.Reset {
			t.Errorf("sample %d = %+v, want %+v", i, e, w)
		}
	}
}

func stored(t *testing.T, env *bustest.Env, n int) []*events.TokensSample {
	t.Helper()
	cons, err := env.JS.OrderedConsumer(context.Background(), bus.Telemetry,
		jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.tokens.>"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*events.TokensSample
	for range 3 {
		batch, err := cons.Fetch(n+1, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			e, err := events.Decode(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.(*events.TokensSample))
		}
	}
	if len(out) != n {
		t.Fatalf("JetStream holds %d token samples, want %d", len(out), n)
	}
	return out
}
