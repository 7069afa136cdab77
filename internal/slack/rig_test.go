package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

const (
	testToken  = "xoxb-test-token"
	testSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	channel    = "C0FINOPS01"
)

var start = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// rig is the approval path end to end: a fake Slack, a real JetStream, the approvals and the
// signed HTTP endpoint.
type rig struct {
	t         *testing.T
	slack     *slacktest.Server
	env       *bustest.Env
	clock     *clock
	approvals *Approvals
	handler   http.Handler
	logs      *bytes.Buffer
	mu        sync.Mutex
	decisions []Decision
	refuse    error // what OnDecision answers
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, slack: slacktest.New(t, testToken), env: bustest.Start(t), clock: &clock{t: start},
		logs: &bytes.Buffer{}}
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: r.logs}, nil))
	api := slack.New(testToken, slack.OptionAPIURL(r.slack.URL))
	r.approvals = NewApprovals(api, channel, bus.NewPublisher(r.env.JS), r.clock.Now, log)
	r.approvals.OnDecision = func(_ context.Context, d Decision) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.decisions = append(r.decisions, d)
		return r.refuse
	}
	r.handler = NewInteractionHandler(NewVerifier(testSecret, r.clock.Now), r.approvals, log)
	return r
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func plan(id string) events.PlanDecided {
	return events.PlanDecided{Meta: events.Meta{At: start}, Workload: "llm", PlanID: id,
		USDPerHourWas: 94.2, USDPerHourNow: 60,
		Actions: []events.PlanAction{
			{ID: id + "-a1", Kind: "scale", Location: "gcp-usc1", Offer: "a3-highgpu-8g", Market: events.OnDemand,
				Replicas: 2, Delta: -1, Reason: "budget", NeedsApproval: true},
			{ID: id + "-a2", Kind: "drain", Location: "gcp-usc1", Offer: "a3-highgpu-8g", Market: events.Spot,
				Replicas: 0, Delta: -1, Reason: "demand_down"}}}
}

// payload is Slack's block_actions payload (testdata, from Slack's documented format) for a
// click of button by user on the plan.
func payload(t *testing.T, user, button, planID string) []byte {
	raw, err := os.ReadFile("testdata/block_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(raw), "U0APPROVER", user)
	s = strings.ReplaceAll(s, "bursar_approve", button)
	s = strings.ReplaceAll(s, "PLAN_ID", planID)
	return []byte("payload=" + url.QueryEscape(s))
}

// signed builds the request Slack would send at ts with secret.
func signed(body []byte, secret string, ts time.Time) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(secret, ts.Unix(), body))
	return req
}

func (r *rig) send(req *http.Request) int {
	w := httptest.NewRecorder()
	r.handler.ServeHTTP(w, req)
	return w.Code
}

func (r *rig) click(user, button, planID string) int {
	return r.send(signed(payload(r.t, user, button, planID), testSecret, r.clock.Now()))
}

// updates reads every action.updated event in the FLEET stream, in order.
func (r *rig) updates() []*events.ActionUpdated {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := r.env.JS.Stream(ctx, bus.Fleet)
	if err != nil {
		r.t.Fatal(err)
	}
	n := int(s.CachedInfo().State.Msgs)
	if n == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.action.>"}})
	if err != nil {
		r.t.Fatal(err)
	}
	batch, err := cons.Fetch(n)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []*events.ActionUpdated
	for m := range batch.Messages() {
		e, err := events.Decode(m.Data())
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, e.(*events.ActionUpdated))
	}
	if len(out) != n {
		r.t.Fatalf("read %d of %d action updates", len(out), n)
	}
	return out
}

func (r *rig) decided() []Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Decision(nil), r.decisions...)
}

// blocks decodes a message's blocks as slack-go reads them.
func blocks(t *testing.T, m slacktest.Message) slack.Blocks {
	t.Helper()
	var bs slack.Blocks
	if err := json.Unmarshal(m.Blocks, &bs); err != nil {
		t.Fatalf("blocks of %s do not decode: %v\n%s", m.Method, err, m.Blocks)
	}
	return bs
}

// buttons lists "action_id=value" of the message's buttons.
func buttons(t *testing.T, m slacktest.Message) []string {
	var out []string
	for _, b := range blocks(t, m).BlockSet {
		ab, ok := b.(*slack.ActionBlock)
		if !ok {
			continue
		}
		for _, el := range ab.Elements.ElementSet {
			if btn, ok := el.(*slack.ButtonBlockElement); ok {
				out = append(out, btn.ActionID+"="+btn.Value)
			}
		}
	}
	return out
}

// texts joins every string in the message's blocks, as a reader would see them (JSON escapes
// undone).
func texts(t *testing.T, m slacktest.Message) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(m.Blocks, &v); err != nil {
		t.Fatalf("blocks do not decode: %v", err)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
