package system

import (
	"context"
	"log/slog"
	"time"

	"github.com/bursar-dev/bursar/internal/anomalywatch"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// anomalyMessages are the Slack side of the cost anomalies: nil without Slack. Their clicks come
// through the same verified endpoint (or Socket Mode) as the approvals'; each answer goes to the
// system's watcher, built after them.
func (s *System) anomalyMessages(api chat, channel string, now func() time.Time, log *slog.Logger) *slack.Anomalies {
	a := slack.NewAnomalies(api, channel, now, log)
	a.OnAnswer = func(ctx context.Context, ans slack.AnomalyAnswer) error {
		return s.Anomalies.Answer(ctx, anomalywatch.Answer{Cause: ans.Cause, Expected: ans.Expected, Actor: ans.Actor,
			At: ans.At, Anomaly: ans.Anomaly, Series: ans.Series})
	}
	return a
}

// watchAnomalies builds the cost anomaly watcher over the service's spend and the budgets'
// scopes, warmed from the history where there is one. Run runs it on its own timer; a caller that steps the service on a virtual clock calls
// Anomalies.Tick itself. Without the answers bucket (a bus made before it existed) answers last
// until a restart.
func (s *System) watchAnomalies(ctx context.Context, so Options, svc *arbiter.Service, b *arbiter.Budgets) error {
	ao, msgs := so.Arbiter, s.anomalyMsgs
	o := anomalywatch.Options{Config: ao.Config, Spend: svc, Publisher: bus.NewPublisher(ao.JS), Policies: b.Policies,
		Leading: svc.Leading, Remedies: svc, History: so.History, Registry: ao.Registry, Log: s.log.With("part", "anomalies")}
	if ao.Clock != nil {
		o.Clock = ao.Clock
	}
	if kv, err := ao.JS.KeyValue(ctx, bus.BucketAnomalyAnswers); err == nil {
		o.Answers = kv
	} else {
		s.log.Warn("no anomaly answers bucket: answers to anomalies last until a restart", "bucket", bus.BucketAnomalyAnswers, "err", err)
	}
	if msgs != nil {
		o.Poster = anomalywatch.PostFunc(func(ctx context.Context, e *events.CostAnomaly) error {
			_, err := msgs.Post(ctx, e)
			return err
		})
	}
	w, err := anomalywatch.New(o)
	if err != nil {
		return err
	}
	s.Anomalies = w
	return nil
}
