package alert

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// TestServicePostsRefusedEventsOnly: a DLQ copy the arbiter marked refused is posted, with the
// subject and the reason; a dead message nobody refused (one that did not decode) is not.
func TestServicePostsRefusedEventsOnly(t *testing.T) {
	r := newRig(t)
	r.start(true)
	dead := func(subject, reason, by string) {
		m := &nats.Msg{Subject: "bursar.dlq." + subject, Data: []byte(`{}`), Header: nats.Header{}}
		m.Header.Set(bus.HeaderOriginalSubject, subject)
		m.Header.Set(bus.HeaderReason, reason)
		if by != "" {
			m.Header.Set(bus.HeaderRefusedBy, by)
		}
		if _, err := r.env.JS.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	dead("bursar.gpu.a.n", "decode: unexpected end of JSON input", "")
	dead("bursar.job.progress.tune", "job.progress of tune says work_done_s 21600 <too much>", "arbiter")
	r.publish(failed("llm", "sentinel", time.Minute)) // FLEET is read before DLQ: posted after both
	msgs := r.slack.WaitFor(t, 2)
	if len(msgs) != 2 {
		t.Fatalf("slack got %d messages, want 2:\n%s", len(msgs), textsOf(msgs))
	}
	var refused int
	for _, m := range msgs {
		if strings.HasPrefix(m.Text, "Event refused by the arbiter: bursar.job.progress.tune: job.progress of tune") {
			refused++
			wantAll(t, m, "bursar.job.progress.tune", "work_done_s 21600 &lt;too much&gt;", "docs/security.md")
		}
	}
	if refused != 1 {
		t.Errorf("want one refused-event alert, got:\n%s", textsOf(msgs))
	}
}

// TestServiceIgnoresEventsOnAnotherTypesSubject: a replica.state published on a price subject is
// no fleet report for the reclaim alerts (the arbiter refuses it; see events.CheckSubject).
func TestServiceIgnoresEventsOnAnotherTypesSubject(t *testing.T) {
	r := newRig(t)
	s := r.start(true)
	forged, err := events.Encode(events.Stamp(running("llm", use1, spotA, events.Spot, 2, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.env.JS.Publish(context.Background(), "bursar.price.aws.us-east-1", forged); err != nil {
		t.Fatal(err)
	}
	r.publish(price("aws-spot", "aws", 0)) // read after the forged one, on the same consumer
	r.until("the price", s, func(tr *Tracker) bool { return len(tr.sources) == 1 })
	s.mu.Lock()
	groups := len(s.tr.reclaims.groups)
	s.mu.Unlock()
	if groups != 0 {
		t.Errorf("the forged replica.state was taken: %d groups known", groups)
	}
	if !strings.Contains(r.logs.String(), "skipping an event on a subject of another type") {
		t.Errorf("the forged event was not logged:\n%s", r.logs.String())
	}
}
