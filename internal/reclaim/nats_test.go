package reclaim

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
)

// countingPublisher counts publishes on their way to the real JetStream publisher, so the test
// sees that a watcher publishes once at the source, not only that JetStream deduplicated.
type countingPublisher struct {
	next  Publisher
	calls atomic.Int64
}

func (c *countingPublisher) Publish(ctx context.Context, e events.Event) error {
	c.calls.Add(1)
	return c.next.Publish(ctx, e)
}

// storedReclaims reads every capacity.reclaimed message on subject from the MARKET stream.
func storedReclaims(t *testing.T, env *bustest.Env, subject string) []*events.CapacityReclaimed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := env.JS.OrderedConsumer(ctx, bus.Market, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*events.CapacityReclaimed
	for {
		batch, err := cons.Fetch(10, jetstream.FetchMaxWait(300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			e, err := events.Decode(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.(*events.CapacityReclaimed))
		}
		if n == 0 {
			return out
		}
	}
}

// runFor runs r until polled reports enough polls, then cancels it and checks it stopped cleanly.
func runFor(t *testing.T, r Runner, polled func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	deadline := time.After(10 * time.Second)
	for !polled() {
		select {
		case <-deadline:
			t.Fatal("the watcher did not poll enough in 10 s")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run() = %v, want nil after cancel", err)
	}
}

func TestWatchersPublishOneNoticeEachToJetStream(t *testing.T) {
	env := bustest.Start(t)
	tests := []struct {
		name         string
		subject      string
		run          func(t *testing.T, pub Publisher)
		wantKind     events.ReclaimKind
		wantDeadline time.Time
		wantLead     time.Duration // when the deadline depends on the first sighting
	}{
		{name: "aws imds", subject: "bursar.reclaim.aws.us-east-1", wantKind: events.ReclaimInterruption,
			wantDeadline: mustTime(t, "2026-09-13T12:00:00Z"), run: func(t *testing.T, pub Publisher) {
				f, srv := newFakeIMDS(t)
				f.set(func(f *fakeIMDS) { f.action = fixture(t, "aws-imds-spot-instance-action.json") })
				w := NewAWSIMDSWatcher(AWSIMDSConfig{NodeConfig: NodeConfig{Location: "aws-use1"},
					Endpoint: srv.URL, Interval: 5 * time.Millisecond, SkipRebalance: true},
					Deps{Publisher: pub, Now: newClock(mustTime(t, "2026-09-13T11:58:03Z")).Now})
				runFor(t, w, func() bool { return f.getCount() > 10 })
			}},
		{name: "aws eventbridge", subject: "bursar.reclaim.aws.us-east-1", wantKind: events.ReclaimInterruption,
			wantDeadline: mustTime(t, "2026-09-13T12:00:00Z"), run: func(t *testing.T, pub Publisher) {
				f, srv := newFakeSQS(t)
				f.send(sqsBody(t))
				f.send(sqsBody(t)) // SQS delivers at least once
				w := newEventBridgeWatcher(t, srv, pub)
				runFor(t, w, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.receives > 3 })
			}},
		{name: "gcp metadata", subject: "bursar.reclaim.gcp.us-central1", wantKind: events.ReclaimPreempted,
			wantLead: 30 * time.Second, run: func(t *testing.T, pub Publisher) {
				f, srv := newFakeGCP(t)
				f.set(func(f *fakeGCPMetadata) { f.values["instance/preempted"] = "TRUE" })
				w := NewGCPWatcher(GCPMetadataConfig{NodeConfig: NodeConfig{Location: "gcp-usc1"},
					Endpoint: srv.URL + "/computeMetadata/v1", WaitTime: time.Second}, Deps{Publisher: pub})
				runFor(t, w, func() bool { return f.waiting() > 2 })
			}},
		{name: "azure scheduled events", subject: "bursar.reclaim.azure.eastus", wantKind: events.ReclaimPreempted,
			wantDeadline: mustTime(t, "2022-08-09T17:07:32Z"), run: func(t *testing.T, pub Publisher) {
				f, srv := newFakeAzure(t)
				f.set(func(f *fakeAzure) { f.doc = fixture(t, "azure-scheduledevents-preempt.json") })
				w := NewAzureWatcher(AzureEventsConfig{NodeConfig: NodeConfig{Location: "azure-eastus"},
					Endpoint: srv.URL, Interval: 5 * time.Millisecond},
					Deps{Publisher: pub, Now: newClock(mustTime(t, "2022-08-09T17:07:05Z")).Now})
				runFor(t, w, func() bool { return f.getCount() > 10 })
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := &countingPublisher{next: bus.NewPublisher(env.JS)}
			tt.run(t, pub)
			if n := pub.calls.Load(); n != 1 {
				t.Errorf("published %d times, want once", n)
			}
			got := storedReclaims(t, env, tt.subject)
			if len(got) != 1 {
				t.Fatalf("JetStream holds %d notices on %s, want 1", len(got), tt.subject)
			}
			e := got[0]
			if e.Kind != tt.wantKind {
				t.Errorf("kind %s, want %s", e.Kind, tt.wantKind)
			}
			if !tt.wantDeadline.IsZero() && !e.Deadline.Equal(tt.wantDeadline) {
				t.Errorf("deadline %s, want %s", e.Deadline, tt.wantDeadline)
			}
			if tt.wantLead != 0 && e.Deadline.Sub(e.NoticeAt) != tt.wantLead {
				t.Errorf("deadline %s after notice, want %s", e.Deadline.Sub(e.NoticeAt), tt.wantLead)
			}
			purge(t, env, tt.subject)
		})
	}
}

func purge(t *testing.T, env *bustest.Env, subject string) {
	t.Helper()
	s, err := env.JS.Stream(context.Background(), bus.Market)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(context.Background(), jetstream.WithPurgeSubject(subject)); err != nil {
		t.Fatal(err)
	}
}
