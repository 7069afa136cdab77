package system

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	slackapi "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/alert"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/health"
	"github.com/bursar-dev/bursar/internal/slack"
)

// approvalSweep is how often held actions past their approval timeout are rejected.
const approvalSweep = 30 * time.Second

// budgets builds the budgets and their Slack approvals, and adds what runs beside them: the
// budgets themselves, the timeout sweep and, with Slack, the endpoint or Socket Mode connection
// that receives the clicks. Without Slack, budgets still apply; held actions wait for their
// timeout and are rejected.
func (s *System) budgets(o Options) (*arbiter.Budgets, error) {
	ao, sc, log := o.Arbiter, o.Slack, s.log
	now := time.Now
	if ao.Clock != nil {
		now = ao.Clock.Now
	}
	var api chat = offlineChat{}
	var onAlert func(context.Context, *events.BudgetAlert)
	if sc.Enabled() {
		if err := sc.Check(o.SlackListen == ""); err != nil {
			return nil, fmt.Errorf("%w (or pass --slack-listen for an HTTP endpoint)", err)
		}
		client, _ := sc.Client()
		api = client
		notifier := slack.NewNotifier(client, sc.Channel, log)
		onAlert = func(ctx context.Context, a *events.BudgetAlert) {
			if _, err := notifier.Post(ctx, slack.BudgetCrossed{BudgetAlert: a}); err != nil {
				log.Warn("posting a budget alert to slack", "policy", a.Policy, "err", err)
			}
		}
	} else {
		log.Warn("no Slack configured (BURSAR_SLACK_BOT_TOKEN_FILE, BURSAR_SLACK_CHANNEL): budgets apply, " +
			"but nobody can be asked to approve; actions held for approval are rejected when their timeout passes")
	}
	approvals := slack.NewApprovals(api, sc.Channel, bus.NewPublisher(ao.JS), now, log)
	s.approvals = approvals
	buttons := slack.Buttons{approvals}
	if sc.Enabled() {
		s.anomalyMsgs = s.anomalyMessages(api, sc.Channel, now, log)
		buttons = append(buttons, s.anomalyMsgs)
	}
	b := arbiter.NewBudgets(arbiter.BudgetOptions{Config: ao.Config, JS: ao.JS, Approvals: SlackApprovals{approvals},
		Clock: ao.Clock, Log: log, OnAlert: onAlert,
		// The service is built after the budgets and before anything runs: it reports for both.
		OnCorrupt: func(c arbiter.Corruption) { s.Service.ReportCorrupt(c) }})
	SlackApprovals{approvals}.Answer(b)
	s.parts = append(s.parts, b.Run, func(ctx context.Context) error { return approvals.Run(ctx, approvalSweep) })
	switch {
	case !sc.Enabled():
	case o.SlackListen != "": // slackleader.go: clicks reach the leader
		v := slack.NewVerifier(sc.SigningSecret, time.Now)
		s.parts = append(s.parts, s.slackEndpoint(o.SlackListen, v, buttons, ao.JS.Conn())...)
	default:
		s.parts = append(s.parts, s.slackSocket(sc, buttons))
	}
	return b, nil
}

// alerts adds the part that posts reclaims handled, failed actions and stale sources to Slack,
// while this arbiter leads; nothing without Slack.
func (s *System) alerts(o Options, leading func() bool) error {
	var clk alert.Clock
	if o.Arbiter.Clock != nil {
		clk = o.Arbiter.Clock
	}
	part, err := Alerts(AlertOptions{JS: o.Arbiter.JS, Slack: o.Slack, Leading: leading, Stale: o.Stale,
		Clock: clk, Registry: o.Arbiter.Registry, Log: s.log})
	if err != nil || part == nil {
		return err
	}
	s.parts = append(s.parts, part)
	return nil
}

// AlertOptions configure Alerts.
type AlertOptions struct {
	JS       jetstream.JetStream
	Slack    slack.Config
	Leading  func() bool // nil: no lease (no fleet), this arbiter posts
	Stale    alert.Thresholds
	Clock    alert.Clock // default: the wall clock
	Registry prometheus.Registerer
	Log      *slog.Logger
}

// Alerts returns the part that follows the bus and posts alerts to Slack (internal/alert), or nil
// when no Slack is configured. An arbiter without a fleet file runs it alone.
func Alerts(o AlertOptions) (func(context.Context) error, error) {
	if !o.Slack.Enabled() {
		o.Log.Info("no Slack configured: reclaim, failed action and stale source alerts are off")
		return nil, nil
	}
	if o.Leading == nil {
		o.Log.Warn("no fleet file, so no leader lease: this arbiter posts alerts; run only one such arbiter per channel")
	}
	client, _ := o.Slack.Client()
	svc, err := alert.New(alert.Options{JS: o.JS, Poster: slack.NewNotifier(client, o.Slack.Channel, o.Log),
		Leading: o.Leading, Thresholds: o.Stale, Clock: o.Clock, Log: o.Log, Registry: o.Registry})
	if err != nil {
		return nil, fmt.Errorf("starting alerts: %w", err)
	}
	return svc.Run, nil
}

// serveInteractions serves Slack's interaction endpoint until ctx ends.
func serveInteractions(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/slack/interactions", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--slack-listen %s: %w", addr, err)
	}
	srv := health.NewServer(mux, health.DefaultTimeouts)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("slack interactions endpoint is up", "url", "http://"+ln.Addr().String()+"/slack/interactions")
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("slack interactions endpoint: %w", err)
	}
	return nil
}

// chat is the part of Slack's Web API the approvals use.
type chat interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slackapi.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slackapi.MsgOption) (string, string, string, error)
	PostEphemeralContext(ctx context.Context, channelID, userID string, options ...slackapi.MsgOption) (string, error)
	GetUserGroupMembersContext(ctx context.Context, group string, options ...slackapi.GetUserGroupMembersOption) ([]string, error)
}

// offlineChat stands in for Slack when none is configured: requests are "posted" nowhere, so
// they stay pending until the sweep rejects them at their timeout, and the audit events are
// still published.
type offlineChat struct{}

func (offlineChat) PostMessageContext(context.Context, string, ...slackapi.MsgOption) (string, string, error) {
	return "", "offline", nil
}

func (offlineChat) UpdateMessageContext(context.Context, string, string, ...slackapi.MsgOption) (string, string, string, error) {
	return "", "", "", nil
}

func (offlineChat) PostEphemeralContext(context.Context, string, string, ...slackapi.MsgOption) (string, error) {
	return "", nil
}

func (offlineChat) GetUserGroupMembersContext(context.Context, string, ...slackapi.GetUserGroupMembersOption) ([]string, error) {
	return nil, nil
}

// corruptAlerts posts each corrupt value the arbiter finds to Slack, off the caller's path; nil
// without Slack (the arbiter's error log and metric still say it).
func corruptAlerts(sc slack.Config, log *slog.Logger) func(arbiter.Corruption) {
	if !sc.Enabled() {
		return nil
	}
	client, _ := sc.Client()
	notifier := slack.NewNotifier(client, sc.Channel, log)
	return func(c arbiter.Corruption) {
		a := slack.StoreCorrupt{Bucket: c.Bucket, Key: c.Key, Revision: c.Revision, Found: c.Found, Action: c.Action}
		if c.Err != nil {
			a.Why = c.Err.Error()
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if _, err := notifier.Post(ctx, a); err != nil {
				log.Warn("posting a corrupt value alert to slack", "key", c.Key, "err", err)
			}
		}()
	}
}
