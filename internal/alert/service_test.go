package alert

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
	"github.com/bursar-dev/bursar/internal/testkit"
)

const (
	testToken   = "xoxb-test-token"
	testChannel = "C0ALERTS01"
)

// rig is the alert path end to end: a real JetStream, a fake Slack, and services following the
// bus as arbiters do.
type rig struct {
	t     *testing.T
	env   *bustest.Env
	slack *slacktest.Server
	pub   *bus.Publisher
	clock *testkit.Clock
	logs  *testkit.Log
}

func newRig(t *testing.T) *rig {
	env := bustest.Start(t)
	return &rig{t: t, env: env, slack: slacktest.New(t, testToken), pub: bus.NewPublisher(env.JS),
		clock: testkit.NewClock(t0), logs: &testkit.Log{}}
}

// start runs a service until the test ends and waits until it has read the backlogs.
func (r *rig) start(leading bool) *Service {
	r.t.Helper()
	api := slackapi.New(testToken, slackapi.OptionAPIURL(r.slack.URL))
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(Options{JS: r.env.JS, Poster: slack.NewNotifier(api, testChannel, log), Leading: func() bool { return leading },
		Thresholds: testThresholds, Clock: r.clock, Every: time.Hour, RetryDelay: 10 * time.Millisecond, Log: log})
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	r.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			r.t.Errorf("run: %v", err)
		}
	})
	r.until("backlogs read", s, func(*Tracker) bool { return s.caught.Load() })
	return s
}

func (r *rig) publish(es ...events.Event) {
	r.t.Helper()
	for _, e := range es {
		if err := r.pub.Publish(context.Background(), events.Stamp(e)); err != nil {
			r.t.Fatal(err)
		}
	}
}

// until waits for the service's tracker to reach a state: events on different streams are read
// by different consumers, so a test that needs an order waits for it.
func (r *rig) until(what string, s *Service, cond func(*Tracker) bool) {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		ok := cond(s.tr)
		s.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// texts is every text of a message's Block Kit blocks, one per line.
func texts(t *testing.T, m slacktest.Message) string {
	t.Helper()
	out, err := slacktest.Texts(m.Blocks)
	if err != nil {
		t.Fatalf("blocks %s: %v", m.Blocks, err)
	}
	return strings.Join(out, "\n")
}

func textsOf(ms []slacktest.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Text + "\n")
	}
	return b.String()
}

func wantAll(t *testing.T, m slacktest.Message, want ...string) {
	t.Helper()
	got := texts(t, m)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s alert lacks %q:\n%s", m.Text, w, got)
		}
	}
}

func TestServiceReclaimHandledAndFailedActions(t *testing.T) {
	r := newRig(t)
	r.publish(failed("llm", "before-start", -time.Minute)) // backlog: read, never posted
	s := r.start(true)
	standby := r.start(false) // a second arbiter: it follows, never posts

	r.publish(running("llm", use1, spotA, events.Spot, 2, 0), running("llm", usc1, a3, events.Spot, 0, 0))
	for _, svc := range []*Service{s, standby} {
		r.until("the fleet's replicas", svc, func(tr *Tracker) bool { return len(tr.reclaims.groups) == 2 })
	}
	r.publish(reclaim("i-0abc", 10*time.Second, 130*time.Second))
	r.until("the notice", s, func(tr *Tracker) bool { return len(tr.reclaims.notices) == 1 })
	if _, err := r.env.JS.Publish(context.Background(), "bursar.action.llm", []byte(`{"type":"action.updated","id":`)); err != nil {
		t.Fatal(err)
	}
	r.publish(decided("llm", "r1", 1, 12*time.Second), launched("llm", "r1", 1, 13*time.Second),
		running("llm", usc1, a3, events.Spot, 0, 30*time.Second), running("llm", usc1, a3, events.Spot, 1, 105*time.Second),
		failed("llm", "a1", 2*time.Minute), failed("llm", "a1", 2*time.Minute+5*time.Second), // the same action, re-sent
		failed("llm", "a2", 3*time.Minute))

	msgs := r.slack.WaitFor(t, 3)
	r.publish(failed("llm", "sentinel", 4*time.Minute)) // read after all the above: nothing else came before it
	msgs = r.slack.WaitFor(t, 4)
	if len(msgs) != 4 {
		t.Fatalf("slack got %d messages, want 4:\n%s", len(msgs), textsOf(msgs))
	}
	for i, want := range []string{"Reclaim handled: llm", "Action failed: launch llm", "Action failed: launch llm",
		"Action failed: launch llm"} {
		if !strings.HasPrefix(msgs[i].Text, want) || msgs[i].Channel != testChannel {
			t.Errorf("message %d = %q in %s, want %q…", i, msgs[i].Text, msgs[i].Channel, want)
		}
	}
	wantAll(t, msgs[0], "i-0abc (interruption) at aws-use1", "aws / aws-use1 / us-east-1a", a3,
		"1m35s, 25s before the deadline", "2m0s")
	wantAll(t, msgs[1], "action a1,")
	wantAll(t, msgs[2], "action a2,")
	wantAll(t, msgs[3], "action sentinel,")
	if logs := r.logs.String(); !strings.Contains(logs, "skipping an event that does not decode") {
		t.Errorf("the malformed event was not logged:\n%s", logs)
	}
}

func TestServiceReclaimMissedDeadline(t *testing.T) {
	r := newRig(t)
	s := r.start(true)
	r.publish(running("llm", use1, spotA, events.Spot, 2, 0))
	r.until("the fleet", s, func(tr *Tracker) bool { return len(tr.reclaims.groups) == 1 })
	r.publish(reclaim("i-0abc", 0, 2*time.Minute))
	r.until("the notice", s, func(tr *Tracker) bool { return len(tr.reclaims.notices) == 1 })
	s.tick(at(time.Minute))
	s.tick(at(2*time.Minute + time.Second))
	s.tick(at(3 * time.Minute))
	r.publish(failed("llm", "sentinel", 4*time.Minute))
	msgs := r.slack.WaitFor(t, 2)
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0].Text, "Reclaim not handled in time: llm") {
		t.Fatalf("messages:\n%s", textsOf(msgs))
	}
	wantAll(t, msgs[0], "aws / aws-use1 / us-east-1a", "none launched", "2m0s")
}

func TestServiceStaleSourceOnceAndBackOnce(t *testing.T) {
	r := newRig(t)
	s := r.start(true)
	r.publish(price("aws-spot", "aws", 0), gpu(use1, 0))
	r.until("both sources", s, func(tr *Tracker) bool { return len(tr.sources) == 2 })
	s.tick(at(time.Minute))
	s.tick(at(3 * time.Minute)) // GPU samples stale
	s.tick(at(4 * time.Minute))
	msgs := r.slack.WaitFor(t, 1)
	r.publish(gpu(use1, 5*time.Minute), gpu(use1, 5*time.Minute+10*time.Second)) // back
	msgs = r.slack.WaitFor(t, 2)
	s.tick(at(6 * time.Minute))
	s.tick(at(7*time.Hour + time.Minute)) // prices stale; GPU samples stale again
	msgs = r.slack.WaitFor(t, 4)
	r.publish(failed("llm", "sentinel", 8*time.Hour))
	msgs = r.slack.WaitFor(t, 5)
	want := []string{"Source stale: GPU samples from aws-use1", "Source back: GPU samples from aws-use1",
		"Source stale: GPU samples from aws-use1", "Source stale: prices from aws-spot (aws)", "Action failed"}
	if len(msgs) != len(want) {
		t.Fatalf("slack got %d messages, want %d:\n%s", len(msgs), len(want), textsOf(msgs))
	}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i].Text, w) {
			t.Errorf("message %d = %q, want %q…", i, msgs[i].Text, w)
		}
	}
	wantAll(t, msgs[0], "no report for longer than 2m0s", "3m0s")
	wantAll(t, msgs[1], "Silent for")
}

func TestServiceRetriesWhenSlackFails(t *testing.T) {
	r := newRig(t)
	r.start(true)
	r.slack.FailNext("chat.postMessage", "internal_error")
	r.publish(failed("llm", "a1", 0))
	msgs := r.slack.WaitFor(t, 1)
	r.publish(failed("llm", "sentinel", time.Minute))
	msgs = r.slack.WaitFor(t, 2)
	if len(msgs) != 2 || !strings.Contains(msgs[0].Text, "llm") {
		t.Fatalf("messages:\n%s", textsOf(msgs))
	}
	if !strings.Contains(r.logs.String(), "posting an alert failed; will retry") {
		t.Error("the failed post was not logged")
	}
}

func TestServiceRunFailsWithoutTheStreams(t *testing.T) {
	r := newRig(t)
	if err := r.env.JS.DeleteStream(context.Background(), bus.Fleet); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{JS: r.env.JS, Poster: slack.NewNotifier(slackapi.New(testToken,
		slackapi.OptionAPIURL(r.slack.URL)), testChannel, slog.New(slog.DiscardHandler)), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Run(ctx); err == nil || !strings.Contains(err.Error(), "FLEET") || ctx.Err() != nil {
		t.Errorf("run = %v (context: %v), want an error naming the stream, at once", err, ctx.Err())
	}
}

func TestServiceFoldsEveryEventOfABatch(t *testing.T) {
	r := newRig(t)
	s := r.start(true)
	other := gpu(use1, time.Minute).(*events.GPUSample)
	other.UUID = "GPU-2"
	catalog := price("aws-spot", "aws", 0).(*events.PriceObserved)
	second := *catalog
	second.InstanceType, second.ID = "p4d.24xlarge", ""
	for _, batch := range [][]events.Event{{gpu(use1, 0), other}, {catalog, &second}} {
		if err := r.pub.PublishBatch(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	r.until("both sources, GPUs up to the batch's last sample", s, func(tr *Tracker) bool {
		gpus, ok := tr.sources["GPU samples from "+use1]
		return len(tr.sources) == 2 && ok && gpus.last.Equal(at(time.Minute))
	})
}
