package tokens

import (
	"context"
	"fmt"
	"reflect"
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
			evs, err := events.DecodeAll(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				out = append(out, e.(*events.TokensSample))
			}
		}
	}
	if len(out) != n {
		t.Fatalf("JetStream holds %d token samples, want %d", len(out), n)
	}
	return out
}

func TestARoundOfManyTargetsGoesOutAsOneBatch(t *testing.T) {
	env := bustest.Start(t)
	var targets []Target
	for i := range 3 {
		_, srv := newFakeServer(t, page(100*(i+1), 10, i))
		targets = append(targets, Target{URL: srv.URL + "/metrics", Server: VLLM, Location: "aws-use1",
			Workload: "llama-8b", Replica: fmt.Sprintf("llama-8b-%d", i)})
	}
	s := newScraper(t, bus.NewPublisher(env.JS), time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC), targets...)
	sent, err := s.round(context.Background(), []int{0, 1, 2})
	if err != nil || len(sent) != 3 {
		t.Fatalf("round() = %d samples, %v; want 3", len(sent), err)
	}
	st, err := env.JS.Stream(context.Background(), bus.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n != 1 {
		t.Fatalf("TELEMETRY holds %d messages, want the round as one batch", n)
	}
	m, err := st.GetMsg(context.Background(), st.CachedInfo().State.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	got, err := events.DecodeAll(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range got {
		if !reflect.DeepEqual(e, events.Event(sent[i])) {
			t.Errorf("event %d = %+v, want %+v", i, e, sent[i])
		}
	}
	if len(got) != len(sent) {
		t.Errorf("the batch holds %d events, want %d", len(got), len(sent))
	}
}
