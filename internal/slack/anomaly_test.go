package slack

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

func costAnomaly() *events.CostAnomaly {
	return &events.CostAnomaly{Meta: events.Meta{At: start}, Anomaly: "workload=llm@20261203T0850Z", State: "open",
		Series: "workload=llm", Cause: "workload=llm|workload=llm,location=aws-use1,gpu_model=H100-80GB,market=on_demand",
		Start: start.Add(-10 * time.Minute), Expected: 40, Observed: 120, Impact: 13.3, Currency: "USD",
		Moved: []string{"location=aws-use1,gpu_model=H100-80GB,market=on_demand"}}
}

// anomalyRig is the approvals' rig with anomaly messages beside them on the same endpoint.
type anomalyRig struct {
	*rig
	anomalies *Anomalies
	mu        sync.Mutex
	answers   []AnomalyAnswer
	refuse    error
}

func newAnomalyRig(t *testing.T) *anomalyRig {
	r := &anomalyRig{rig: newRig(t)}
	api := slack.New(testToken, slack.OptionAPIURL(r.slack.URL))
	r.anomalies = NewAnomalies(api, channel, r.clock.Now, slog.New(slog.DiscardHandler))
	r.anomalies.OnAnswer = func(_ context.Context, a AnomalyAnswer) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.refuse != nil {
			return r.refuse
		}
		r.answers = append(r.answers, a)
		return nil
	}
	r.handler = NewInteractionHandler(NewVerifier(testSecret, r.clock.Now), Buttons{r.approvals, r.anomalies},
		slog.New(slog.DiscardHandler))
	return r
}

func (r *anomalyRig) got() []AnomalyAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]AnomalyAnswer(nil), r.answers...)
}

func TestAnomalyPostedAndAnswered(t *testing.T) {
	r := newAnomalyRig(t)
	ctx := context.Background()
	at, err := r.anomalies.Post(ctx, costAnomaly())
	if err != nil {
		t.Fatal(err)
	}
	msgs := r.slack.WaitFor(t, 1)
	if at.TS != msgs[0].TS || msgs[0].Channel != channel {
		t.Fatalf("posted at %+v, the fake has %s/%s", at, msgs[0].Channel, msgs[0].TS)
	}
	btns := buttons(t, msgs[0])
	if len(btns) != 2 || !strings.HasPrefix(btns[0], ActionExpected+"=") || !strings.HasPrefix(btns[1], ActionNotExpected+"=") {
		t.Fatalf("buttons %q, want Expected and Not expected", btns)
	}
	for _, want := range []string{"120.00 USD/h", "40.00 USD/h", "×3.0", "location=aws-use1"} {
		if !strings.Contains(texts(t, msgs[0]), want) {
			t.Errorf("message does not say %q:\n%s", want, texts(t, msgs[0]))
		}
	}
	value := strings.TrimPrefix(btns[0], ActionExpected+"=")
	if code := r.send(signed(slacktest.Click(msgs[0], "U0DANA", ActionExpected, value), testSecret, r.clock.Now())); code != http.StatusOK {
		t.Fatalf("click answered %d", code)
	}
	got := r.got()
	if len(got) != 1 || !got[0].Expected || got[0].Actor != "U0DANA" || got[0].Cause != costAnomaly().Cause ||
		got[0].Anomaly != costAnomaly().Anomaly || !got[0].At.Equal(start) {
		t.Fatalf("answers %+v", got)
	}
	msgs = r.slack.WaitFor(t, 2)
	upd := msgs[1]
	if upd.Method != "chat.update" || upd.TS != at.TS {
		t.Fatalf("second call %s %s, want the message updated", upd.Method, upd.TS)
	}
	if len(buttons(t, upd)) != 0 || !strings.Contains(texts(t, upd), "<@U0DANA>") || !strings.Contains(texts(t, upd), "120.00 USD/h") {
		t.Fatalf("updated message keeps its buttons or does not say who answered:\n%s", texts(t, upd))
	}
}

func TestAnomalyAnswerNotStored(t *testing.T) {
	r := newAnomalyRig(t)
	r.refuse = errors.New("bucket unavailable")
	if _, err := r.anomalies.Post(context.Background(), costAnomaly()); err != nil {
		t.Fatal(err)
	}
	m := r.slack.WaitFor(t, 1)[0]
	value := strings.TrimPrefix(buttons(t, m)[1], ActionNotExpected+"=")
	r.send(signed(slacktest.Click(m, "U0DANA", ActionNotExpected, value), testSecret, r.clock.Now()))
	msgs := r.slack.WaitFor(t, 2)
	if msgs[1].Method != "chat.postEphemeral" || msgs[1].User != "U0DANA" {
		t.Fatalf("the user was not told: %+v", msgs[1])
	}
	if len(msgs) != 2 {
		t.Fatalf("the message changed though nothing was stored: %+v", msgs[2:])
	}
}

func TestAnomalyButtonsRouted(t *testing.T) {
	tests := []struct {
		name, action, value string
		wantErr             error
	}{
		{"approval button goes to the approvals", ActionApprove, "plan-unknown", ErrNoPending},
		{"value not JSON", ActionExpected, "{not json", ErrNotAButton},
		{"value without a cause", ActionExpected, `{"anomaly":"a"}`, ErrNotAButton},
		{"another app's button", "other_action", `{"cause":"x"}`, ErrNotAButton},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newAnomalyRig(t)
			m := slacktest.Message{Channel: channel, TS: "1764482400.000009", Text: "x"}
			cb, err := ParseInteraction(slacktest.Click(m, "U0DANA", tc.action, tc.value))
			if err != nil {
				t.Fatal(err)
			}
			if err := (Buttons{r.approvals, r.anomalies}).Handle(context.Background(), cb); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Handle: %v, want %v", err, tc.wantErr)
			}
			if len(r.got()) != 0 {
				t.Fatalf("stored %+v", r.got())
			}
		})
	}
}

func TestAnomalyPostedWithoutButtons(t *testing.T) {
	tests := []struct {
		name, want string
		edit       func(*events.CostAnomaly)
	}{
		{"a cause over Slack's limit", "too long", func(e *events.CostAnomaly) { e.Cause = strings.Repeat("workload=x,", 300) }},
		{"nothing explains it: an answer would quiet the whole scope", "No series explains", func(e *events.CostAnomaly) {
			e.Moved, e.Cause = nil, e.Series
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newAnomalyRig(t)
			e := costAnomaly()
			tc.edit(e)
			if _, err := r.anomalies.Post(context.Background(), e); err != nil {
				t.Fatal(err)
			}
			m := r.slack.WaitFor(t, 1)[0]
			if len(buttons(t, m)) != 0 || !strings.Contains(texts(t, m), tc.want) {
				t.Fatalf("buttons %q, text:\n%s", buttons(t, m), texts(t, m))
			}
		})
	}
}

// FuzzAnomalyButton feeds the anomaly button reader arbitrary values: it must never panic, and
// what it accepts carries a cause.
func FuzzAnomalyButton(f *testing.F) {
	f.Add(ActionExpected, `{"anomaly":"a","series":"workload=llm","cause":"workload=llm|x"}`)
	f.Add(ActionNotExpected, `{"cause":""}`)
	f.Add(ActionExpected, `[1,2]`)
	f.Add("bursar_approve", `{"cause":"c"}`)
	f.Fuzz(func(t *testing.T, action, value string) {
		body := slacktest.Click(slacktest.Message{Channel: channel, TS: "1.2"}, "U1", action, value)
		cb, err := ParseInteraction(body)
		if err != nil {
			return
		}
		if _, ref, ok := anomalyButton(cb); ok && ref.Cause == "" {
			t.Fatalf("accepted %q with no cause", value)
		}
	})
}
