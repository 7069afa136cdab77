package arbiter_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	slackapi "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/alert"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// forger publishes raw messages on any subject with the least role that may publish it: the
// collector's credentials where they reach (price, reclaim, telemetry, job progress), else the
// arbiter's (a bug in an arbiter, or its key in the wrong hands).
type forger struct {
	t                  *testing.T
	collector, arbiter jetstream.JetStream
}

func (h *harness) forger() *forger {
	_, cjs := h.env.ConnectAs(h.t, bus.RoleCollector)
	return &forger{t: h.t, collector: cjs, arbiter: h.env.JS}
}

// publish stores e's encoding on subject and returns the stream and sequence it got.
func (f *forger) publish(subject string, e events.Event) *jetstream.PubAck {
	f.t.Helper()
	data, err := events.Encode(events.Stamp(e))
	if err != nil {
		f.t.Fatal(err)
	}
	js := f.arbiter
	if slices.ContainsFunc(bus.Permissions(bus.RoleCollector).Publish.Allow, func(p string) bool {
		return server.SubjectMatchesFilter(subject, p)
	}) {
		js = f.collector
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data})
	if err != nil {
		f.t.Fatalf("publishing a %s on %s: %v", e.EventType(), subject, err)
	}
	return ack
}

// refusal waits for the arbiter's DLQ copy of the message ack stored and returns its reason.
func refusal(t *testing.T, js jetstream.JetStream, subject string, ack *jetstream.PubAck) string {
	t.Helper()
	dlq, err := js.Stream(context.Background(), bus.DLQ)
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("refused:arbiter:%s:%d", ack.Stream, ack.Sequence)
	var m *jetstream.RawStreamMsg
	eventually(t, "the arbiter's DLQ copy of "+subject+" #"+fmt.Sprint(ack.Sequence), func() bool {
		m, err = dlq.GetLastMsgForSubject(context.Background(), "bursar.dlq."+subject)
		return err == nil && m.Header.Get(jetstream.MsgIDHeader) == id
	})
	if by := m.Header.Get(bus.HeaderRefusedBy); by != "arbiter" || m.Header.Get(bus.HeaderOriginalSubject) != subject {
		t.Errorf("DLQ copy headers %v, want refused by the arbiter, from %s", m.Header, subject)
	}
	return m.Header.Get(bus.HeaderReason)
}

// followed says whether the arbiter reads subject at all (its follow's inputs).
func followed(subject string) bool {
	for _, p := range []string{"bursar.reclaim.>", "bursar.price.>", "bursar.tokens.>", "bursar.gpu.>", "bursar.fleet.>",
		"bursar.job.progress.>"} {
		if server.SubjectMatchesFilter(subject, p) {
			return true
		}
	}
	return false
}

// TestEventsOnAnotherTypesSubjectAreRefused: every event type, published on a subject of every
// other type (together, the subjects of every event stream), is never folded: the arbiter's view
// stays as it was, no action is applied, and each message the arbiter reads goes to DLQ with the
// reason. The arbiter folded whatever decoded, wherever it came from: a replica.state from the
// collector's credentials on a price subject was taken as a fleet report and acted on.
func TestEventsOnAnotherTypesSubjectAreRefused(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	h.price("us-east-1a", events.Spot, 1.0)
	h.price("us-east-1b", events.Spot, 1.2)
	r := h.start("a1", nil)
	eventually(t, "leading", r.Leading)
	h.settle(ctx, r)
	if err := r.AwaitFolded(ctx); err != nil {
		t.Fatal(err)
	}
	samples := eventstest.Samples(t0, 7)
	subjects := coveringSubjects(t, samples)
	view, folded, calls := r.View(), r.Folded(), len(h.sim.Calls())
	f := h.forger()
	for _, e := range samples {
		for _, other := range samples {
			subject := other.Subject()
			if other.EventType() == e.EventType() {
				continue
			}
			t.Run(fmt.Sprintf("%s on %s", e.EventType(), other.EventType()), func(t *testing.T) {
				ack := f.publish(subject, e)
				if err := r.AwaitFolded(ctx); err != nil {
					t.Fatal(err)
				}
				if !followed(subject) {
					return // never read by the arbiter: the recorder dead-letters it
				}
				reason := refusal(t, h.env.JS, subject, ack)
				for _, want := range []string{string(e.EventType()), subject, events.ErrWrongSubject.Error(),
					events.SubjectPattern(e.EventType())} {
					if !strings.Contains(reason, want) {
						t.Errorf("DLQ reason %q does not say %q", reason, want)
					}
				}
			})
		}
	}
	h.settle(ctx, r)
	if got := r.View(); got != view {
		t.Errorf("the arbiter's view changed:\nbefore %s\nafter  %s", view, got)
	}
	if got := r.Folded(); got != folded {
		t.Errorf("%v events folded, want %v: none of the forged ones", got, folded)
	}
	if got := h.sim.Calls(); len(got) != calls {
		t.Errorf("actions applied after the forged events: %+v", got[calls:])
	}
	for _, e := range samples {
		want := 0.0
		for _, s := range subjects {
			if followed(s) && s != e.Subject() {
				want++
			}
		}
		if got := r.Refused(string(e.EventType()), "subject"); got != want {
			t.Errorf("%v %s refused, want %v", got, e.EventType(), want)
		}
	}
}

// coveringSubjects are the samples' subjects, checked to cover every subject of every event stream.
func coveringSubjects(t *testing.T, samples []events.Event) []string {
	t.Helper()
	var out []string
	for _, e := range samples {
		out = append(out, e.Subject())
	}
	for _, st := range bus.Streams(bus.Options{}) {
		if st.Name == bus.DLQ {
			continue
		}
		for _, p := range st.Subjects {
			if !slices.ContainsFunc(out, func(s string) bool { return server.SubjectMatchesFilter(s, p) }) {
				t.Fatalf("no event type's subject falls under %s of %s", p, st.Name)
			}
		}
	}
	return out
}

// TestForgedFleetReportOnAPriceSubjectIsNotActedOn is the case: with the collector's
// credentials, a replica.state saying the workload's spot group has nothing (desired 0, ready 0)
// published on a price subject. The arbiter took it as a fleet report and launched to follow it.
func TestForgedFleetReportOnAPriceSubjectIsNotActedOn(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	spotA := h.price("us-east-1a", events.Spot, 1.0)
	h.price("us-east-1b", events.Spot, 1.2)
	r := h.start("a1", nil)
	eventually(t, "leading", r.Leading)
	h.settle(ctx, r)
	if n, _ := h.sim.Desired(ctx, actuate.Group{Workload: "svc", Location: "a", Market: events.Spot}); n == 0 {
		t.Fatal("svc runs nothing on spot in a, the cheapest")
	}
	calls := len(h.sim.Calls())
	forged := &events.ReplicaState{Meta: events.Meta{At: h.clock.Now().Add(time.Second)}, Workload: "svc", Location: "a",
		Provider: "aws", Market: events.Spot, Offer: spotA, GPUModel: "H100-80GB", GPUs: 1, USDPerHour: 1.0}
	subject := "bursar.price.aws.us-east-1"
	ack := h.forger().publish(subject, forged)
	if err := r.AwaitFolded(ctx); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(2 * time.Second)
	r.Pass(ctx) // plans on the view as folded, before the actuator is asked again
	eventually(t, "no action is in flight", func() bool { return r.InFlight() == 0 })
	if got := h.sim.Calls(); len(got) != calls {
		t.Errorf("actions applied after the forged report: %+v", got[calls:])
	}
	reason := refusal(t, h.env.JS, subject, ack)
	if !strings.Contains(reason, "a replica.state event on "+subject+" (a price.observed subject)") {
		t.Errorf("DLQ reason %q does not say what came where", reason)
	}
}

// sixHourJob is jobYAML's job with six hours of work, due in twelve.
var sixHourJob = strings.Replace(jobYAML, "job: {work: 1h, deadline_in: 3h, overhead: 3m}",
	"job: {work: 6h, deadline_in: 12h, overhead: 3m}", 1)

// TestImpossibleJobProgressIsRefused is the case: 26 s after a six-hour job was
// submitted, one job.progress from the collector's credentials said all its work was done. The
// arbiter marked the job finished and stopped its instance. It is refused now: sent to DLQ, an
// alert posted, and the job runs on.
func TestImpossibleJobProgressIsRefused(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, sixHourJob)
	h.price("us-east-1a", events.Spot, 1.0)
	slk := startAlerts(t, h)
	r := h.startJobs()
	eventually(t, "leading", r.Leading)
	h.settle(ctx, r) // the job's instance is launched at t0, when it was submitted
	tune := actuate.Group{Workload: "tune", Location: "a", Market: events.Spot}
	if n, _ := h.sim.Desired(ctx, tune); n != 1 {
		t.Fatalf("tune desired %d on spot in a, want 1", n)
	}
	h.clock.Advance(26 * time.Second)
	at := h.clock.Now()
	p := &events.JobProgress{Meta: events.Meta{At: at}, Job: "tune", WorkDoneS: (6 * time.Hour).Seconds(),
		CheckpointAt: &at, Location: "a", Market: events.Spot}
	subject := p.Subject()
	ack := h.forger().publish(subject, p)
	if err := r.AwaitFolded(ctx); err != nil {
		t.Fatal(err)
	}
	if r.JobReported("tune") || r.Refused("job.progress", "implausible") != 1 {
		t.Errorf("the progress was taken (reported %v, refused %v)", r.JobReported("tune"), r.Refused("job.progress", "implausible"))
	}
	for range 3 {
		h.step(ctx, r)
	}
	if st := r.JobState("tune"); st != events.JobRunning {
		t.Errorf("the job is %q, want running", st)
	}
	if n, _ := h.sim.Desired(ctx, tune); n != 1 || !slices.ContainsFunc(h.sim.Lives(), func(l sim.Life) bool {
		return l.Group == tune && l.Gone.IsZero()
	}) {
		t.Errorf("the job's instance was stopped (desired %d); lives %+v", n, h.sim.Lives())
	}
	reason := refusal(t, h.env.JS, subject, ack)
	for _, want := range []string{"work_done_s 21600", "tune", "26s of run time"} {
		if !strings.Contains(reason, want) {
			t.Errorf("DLQ reason %q does not say %q", reason, want)
		}
	}
	msgs := slk.WaitFor(t, 1)
	if !strings.Contains(msgs[0].Text, "Event refused by the arbiter: "+subject) {
		t.Errorf("alert %q, want the refused progress", msgs[0].Text)
	}
}

// startAlerts runs the alert service over h's bus, posting to a fake Slack, until the test ends.
func startAlerts(t *testing.T, h *harness) *slacktest.Server {
	t.Helper()
	const token = "xoxb-test-token"
	slk := slacktest.New(t, token)
	log := slog.New(slog.DiscardHandler)
	api := slackapi.New(token, slackapi.OptionAPIURL(slk.URL))
	svc, err := alert.New(alert.Options{JS: h.env.JS, Poster: slack.NewNotifier(api, "C0ALERTS01", log), Clock: h.clock,
		Every: time.Hour, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return slk
}
