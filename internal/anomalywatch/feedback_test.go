package anomalywatch

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	slackapi "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

const (
	token   = "xoxb-test-token"
	secret  = "8f742231b10e8888abcd99yyyzzz85a5"
	channel = "C0FINOPS01"
)

// slackRig is the anomaly path to people and back: a fake Slack, the anomaly messages, the
// signed interactions endpoint, and the watcher the answers go to (set by watch).
type slackRig struct {
	t         *testing.T
	slack     *slacktest.Server
	clock     *clock
	anomalies *slack.Anomalies
	handler   http.Handler
	w         *Watcher
}

func newSlackRig(t *testing.T, c *clock) *slackRig {
	r := &slackRig{t: t, slack: slacktest.New(t, token), clock: c}
	api := slackapi.New(token, slackapi.OptionAPIURL(r.slack.URL))
	log := slog.New(slog.DiscardHandler)
	r.anomalies = slack.NewAnomalies(api, channel, c.Now, log)
	r.anomalies.OnAnswer = func(ctx context.Context, a slack.AnomalyAnswer) error {
		return r.w.Answer(ctx, Answer{Cause: a.Cause, Expected: a.Expected, Actor: a.Actor, At: a.At, Anomaly: a.Anomaly, Series: a.Series})
	}
	r.handler = slack.NewInteractionHandler(slack.NewVerifier(secret, c.Now), r.anomalies, log)
	return r
}

// watch starts a watcher (a fresh one, as after a restart) posting through the rig.
func (r *slackRig) watch(o Options) *Watcher {
	o.Poster = PostFunc(func(ctx context.Context, e *events.CostAnomaly) error {
		_, err := r.anomalies.Post(ctx, e)
		return err
	})
	w, err := New(o)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := w.Load(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.w = w
	return w
}

// posts are the anomaly messages posted so far.
func (r *slackRig) posts() []slacktest.Message {
	var out []slacktest.Message
	for _, m := range r.slack.Messages() {
		if m.Method == "chat.postMessage" {
			out = append(out, m)
		}
	}
	return out
}

// click presses the button on m as user, signed as Slack signs it.
func (r *slackRig) click(m slacktest.Message, user, action string) {
	r.t.Helper()
	value := ""
	for _, b := range buttonValues(r.t, m) {
		if k, v, _ := strings.Cut(b, "="); k == action {
			value = v
		}
	}
	if value == "" {
		r.t.Fatalf("message %s has no %s button", m.TS, action)
	}
	body := slacktest.Click(m, user, action, value)
	ts := r.clock.Now()
	req := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", slack.Sign(secret, ts.Unix(), body))
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		r.t.Fatalf("click answered %d", rec.Code)
	}
}

func buttonValues(t *testing.T, m slacktest.Message) []string {
	var bs slackapi.Blocks
	if err := bs.UnmarshalJSON(m.Blocks); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	var out []string
	for _, b := range bs.BlockSet {
		if ab, ok := b.(*slackapi.ActionBlock); ok {
			for _, el := range ab.Elements.ElementSet {
				if btn, ok := el.(*slackapi.ButtonBlockElement); ok {
					out = append(out, btn.ActionID+"="+btn.Value)
				}
			}
		}
	}
	return out
}

// excursion runs d of steady spend, then the fallback for 30 minutes, then steady for an hour.
func excursion(ctx context.Context, w *Watcher, c *clock, sp *spend, d time.Duration, up ...arbiter.Burn) {
	sp.set(spot, base)
	run(ctx, w, c, d)
	sp.set(up...)
	run(ctx, w, c, 30*time.Minute)
	sp.set(spot, base)
	run(ctx, w, c, time.Hour)
}

func TestExpectedAnswerQuietsTheCauseAcrossRestarts(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	c, sp := &clock{t: t0}, &spend{}
	r := newSlackRig(t, c)
	opts := Options{Config: &testConfigNoTeam, Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c,
		Answers: answersKV(t, env.JS), Detector: detector()}
	w := r.watch(opts)

	excursion(ctx, w, c, sp, 6*time.Hour, spot, fallback)
	first := r.posts()
	if len(first) == 0 {
		t.Fatal("the anomaly was not posted")
	}
	for _, m := range first {
		r.click(m, "U0DANA", slack.ActionExpected)
	}
	for _, m := range first {
		if !updatedBy(r.slack.Messages(), m.TS, "<@U0DANA>") {
			t.Errorf("message %s was not updated with who answered", m.TS)
		}
	}
	stored, err := Answers{KV: opts.Answers}.ReadAll(ctx)
	if err != nil || len(stored) != len(first) {
		t.Fatalf("stored answers %+v (%v), want %d", stored, err, len(first))
	}

	excursion(ctx, w, c, sp, 6*time.Hour, spot, fallback)
	if n := len(r.posts()); n != len(first) {
		t.Fatalf("the same cause again was posted: %d posts, want %d", n, len(first))
	}
	if opened := countOpened(published(t, env.JS)); opened != 2*len(first) {
		t.Fatalf("%d anomalies published, want %d: quieting posts, not the record", opened, 2*len(first))
	}
	if q := testutil.ToFloat64(w.m.posts.WithLabelValues("quieted")); int(q) != len(first) {
		t.Errorf("bursar_cost_anomaly_posts_total{outcome=quieted} = %v, want %d", q, len(first))
	}
	if o := testutil.ToFloat64(w.m.open); o != 0 {
		t.Errorf("bursar_cost_anomalies_open = %v after every anomaly closed", o)
	}

	w = r.watch(opts) // a restart: nothing in memory, the answers in the bucket
	excursion(ctx, w, c, sp, 6*time.Hour, spot, fallback)
	if n := len(r.posts()); n != len(first) {
		t.Fatalf("after a restart the same cause was posted again: %d posts, want %d", n, len(first))
	}

	west := arbiter.Burn{Workload: "llm", Provider: "aws", Location: "aws-usw2", Market: "on_demand", GPUModel: "H100-80GB", Ready: 4, GPUs: 32, USDPerHour: 60}
	excursion(ctx, w, c, sp, 6*time.Hour, spot, base, west)
	if n := len(r.posts()); n <= len(first) {
		t.Fatal("another cause (another location moved) was not posted")
	}
}

func TestNotExpectedKeepsPosting(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	c, sp := &clock{t: t0}, &spend{}
	r := newSlackRig(t, c)
	w := r.watch(Options{Config: &testConfigNoTeam, Spend: sp, Publisher: bus.NewPublisher(env.JS), Clock: c,
		Answers: answersKV(t, env.JS), Detector: detector()})
	excursion(ctx, w, c, sp, 6*time.Hour, spot, fallback)
	first := r.posts()
	if len(first) == 0 {
		t.Fatal("the anomaly was not posted")
	}
	for _, m := range first {
		r.click(m, "U0DANA", slack.ActionNotExpected)
	}
	excursion(ctx, w, c, sp, 6*time.Hour, spot, fallback)
	if n := len(r.posts()); n != 2*len(first) {
		t.Fatalf("%d posts after a repeat answered not expected, want %d", n, 2*len(first))
	}
}

func updatedBy(msgs []slacktest.Message, ts, who string) bool {
	for _, m := range msgs {
		if m.Method == "chat.update" && m.TS == ts && strings.Contains(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(m.Blocks)), who) {
			return true
		}
	}
	return false
}

func countOpened(evs []*events.CostAnomaly) int {
	n := 0
	for _, e := range evs {
		if e.State == StateOpen {
			n++
		}
	}
	return n
}
