package slack

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/events"
)

func TestSocketModeDecidesLikeTheEndpoint(t *testing.T) {
	r := newRig(t)
	r.slack.AppToken = "xapp-1-test"
	ask(t, r, "plan-1", "U0APPROVER")
	raw, err := os.ReadFile("testdata/block_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	r.slack.QueueInteractive([]byte(strings.ReplaceAll(string(raw), "PLAN_ID", "plan-1")))

	cfg := Config{BotToken: testToken, AppToken: "xapp-1-test", Channel: channel, APIURL: r.slack.URL}
	_, sm := cfg.Client()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunSocketMode(ctx, sm, r.approvals, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunSocketMode: %v", err)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(r.decided()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if d := r.decided(); len(d) != 1 || d[0].Status != events.ActionApproved || d[0].Actor != "U0APPROVER" {
		t.Fatalf("decisions = %+v", d)
	}
	if len(r.slack.Acks()) != 1 {
		t.Errorf("acks = %v, want the envelope acknowledged", r.slack.Acks())
	}
}

func TestNotifierPostsBlockKitAlerts(t *testing.T) {
	r := newRig(t)
	n := NewNotifier(slack.New(testToken, slack.OptionAPIURL(r.slack.URL)), channel, slog.New(slog.DiscardHandler))
	budget := &events.BudgetAlert{Meta: events.Meta{At: start}, Policy: "llm-monthly", Scope: "workload=llm",
		Period: "month", PeriodStart: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Basis: "actual",
		Threshold: "80%", Spend: 40123.5, Limit: 50000, Currency: "USD"}
	failed := &events.ActionUpdated{Meta: events.Meta{At: start}, Workload: "llm", ActionID: "a1", PlanID: "p1",
		Status: events.ActionFailed, Kind: "launch", Location: "gcp-usc1", Offer: "a3", Market: events.Spot,
		Replicas: 2, Reason: "reclaim", Detail: "ZONE_RESOURCE_POOL_EXHAUSTED <b>"}
	tests := []struct {
		name  string
		alert Alert
		want  []string
	}{
		{"reclaim handled", ReclaimHandled{Workload: "llm", Location: "aws-use1", Instance: "i-0abc", Kind: events.ReclaimInterruption,
			NoticeAt: start, Deadline: start.Add(2 * time.Minute), Replacement: "gcp-usc1/a3-highgpu-8g", ReadyAt: start.Add(95 * time.Second)},
			[]string{"Reclaim handled: llm", "i-0abc (interruption) at aws-use1", "gcp-usc1/a3-highgpu-8g", "1m35s, 25s before the deadline"}},
		{"budget crossed", BudgetCrossed{budget}, []string{"Budget llm-monthly: actual 80% reached", "40123.50 USD (80% of 50000.00)", "month from 2026-12-01"}},
		{"budget cleared", BudgetCrossed{&events.BudgetAlert{Policy: "x", Basis: "forecast", Threshold: "100%", Cleared: true, Limit: 1}},
			[]string{"Budget x: back under forecast 100%"}},
		{"action failed", ActionFailed{failed}, []string{"Action failed: launch llm", "ZONE_RESOURCE_POOL_EXHAUSTED &lt;b&gt;", "action a1, plan p1"}},
		{"source stale", SourceStale{Source: "aws-spot us-east-1", LastSeen: start, Now: start.Add(47 * time.Minute)},
			[]string{"Source stale: aws-spot us-east-1", "47m0s"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := n.Post(context.Background(), tt.alert); err != nil {
				t.Fatal(err)
			}
			m := r.slack.WaitFor(t, i+1)[i]
			if m.Text != tt.alert.Text() || m.Channel != channel {
				t.Errorf("message %+v", m)
			}
			got := texts(t, m)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("alert lacks %q:\n%s", w, got)
				}
			}
			blocks(t, m) // slack-go reads them back
		})
	}
	r.slack.FailNext("chat.postMessage", "ratelimited")
	if _, err := n.Post(context.Background(), SourceStale{Source: "x", Now: start}); err == nil || !strings.Contains(err.Error(), "rate limit") {
		t.Errorf("rate-limited post: err = %v", err)
	}
	bad := NewNotifier(slack.New("xoxb-wrong", slack.OptionAPIURL(r.slack.URL)), channel, slog.New(slog.DiscardHandler))
	if _, err := bad.Post(context.Background(), SourceStale{Source: "x", Now: start}); err == nil || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), "xoxb-wrong") {
		t.Errorf("bad token: err = %v (must name the failure, never the token)", err)
	}
}

func TestConfigFromEnvReadsSecretFiles(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/secret"
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BURSAR_SLACK_CHANNEL": "C1", "BURSAR_SLACK_BOT_TOKEN": "xoxb-1",
		"BURSAR_SLACK_SIGNING_SECRET_FILE": file}
	c, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || c.SigningSecret != "s3cret" || c.BotToken != "xoxb-1" || c.Check(false) != nil {
		t.Fatalf("config = %+v, %v", c, err)
	}
	if err := c.Check(true); err == nil || !strings.Contains(err.Error(), "BURSAR_SLACK_APP_TOKEN_FILE") {
		t.Errorf("socket mode without an app token: %v", err)
	}
	env["BURSAR_SLACK_APP_TOKEN_FILE"] = dir + "/missing"
	if _, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err == nil {
		t.Error("a missing secret file was ignored")
	}
}
