package main

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/alert"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// TestStartAlertsPostsFailedActions checks the wiring of `arbiter run`'s alerts: with Slack
// configured, a failed action on the bus reaches the channel.
func TestStartAlertsPostsFailedActions(t *testing.T) {
	env := bustest.Start(t)
	fake := slacktest.New(t, "xoxb-test")
	sc := slack.Config{Channel: "C0ALERTS01", BotToken: "xoxb-test", APIURL: fake.URL}
	ctx, cancel := context.WithCancel(context.Background())
	var g run.Group
	err := startAlerts(ctx, &g, sc, env.JS, func() bool { return true },
		alert.Thresholds{Prices: alert.DefaultPriceStale, Telemetry: alert.DefaultTelemetryStale}, prometheus.NewRegistry(),
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Run() }()
	defer func() { cancel(); <-done }()
	pub := bus.NewPublisher(env.JS)
	// What is on the bus before the alerts have started is backlog and never posted: publish
	// failures until one is read live.
	for i := 0; len(fake.Messages()) == 0; i++ {
		if i == 100 {
			t.Fatal("no alert posted")
		}
		e := &events.ActionUpdated{Meta: events.Meta{At: time.Now().UTC()}, Workload: "llm", ActionID: "a" + strconv.Itoa(i),
			Status: events.ActionFailed, Kind: "launch", Location: "gcp-usc1", Market: events.Spot, Replicas: 1, Detail: "quota"}
		if err := pub.Publish(ctx, events.Stamp(e)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := fake.Messages()[0]
	if m.Channel != "C0ALERTS01" || !strings.HasPrefix(m.Text, "Action failed: launch llm at gcp-usc1: quota") {
		t.Errorf("message = %q in %s", m.Text, m.Channel)
	}
}

func TestStartAlertsWithoutSlackAddsNothing(t *testing.T) {
	var g run.Group
	if err := startAlerts(context.Background(), &g, slack.Config{}, nil, nil, alert.Thresholds{}, nil,
		slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if err := g.Run(); err != nil { // an empty group returns at once
		t.Fatal(err)
	}
}

func TestCheckStale(t *testing.T) {
	tests := []struct {
		name    string
		th      alert.Thresholds
		wantErr string
	}{
		{"defaults", alert.Thresholds{Prices: alert.DefaultPriceStale, Telemetry: alert.DefaultTelemetryStale}, ""},
		{"off", alert.Thresholds{}, ""},
		{"negative prices", alert.Thresholds{Prices: -time.Minute}, "--stale-prices -1m0s"},
		{"negative telemetry", alert.Thresholds{Telemetry: -time.Second}, "--stale-telemetry -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkStale(tt.th)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("checkStale = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
