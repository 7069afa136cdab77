// Package system builds the arbiter as every program runs it: the bus with its streams and
// buckets, the store and the recorder (OpenInfra), and on them the arbiter service with its
// budgets and approvals and, with Slack configured, its alerts (Infra.System, or New on a bus of
// the caller's, as the soak's cluster). `arbiter run`, `arbiter demo`, the replay and the job
// replay through the service all build it here and differ only in the actuator and clock they
// give it, so what the demo and the replays measure is what runs.
package system

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/run"

	"github.com/bursar-dev/bursar/internal/alert"
	"github.com/bursar-dev/bursar/internal/anomalywatch"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/slack"
)

// Options configure a System. Arbiter holds the service's own options (fleet, JetStream,
// actuators, clock, log, metrics, lease, tuning); its Gate and Caps are the system's budgets.
type Options struct {
	Arbiter arbiter.Options
	// Slack, when enabled, asks approvers and posts alerts; the zero Config runs without Slack:
	// budgets apply, held actions are rejected at their timeout, and no alert is posted.
	Slack slack.Config
	// SlackListen is the address of the endpoint Slack posts approval clicks to; empty selects
	// Socket Mode (with Slack enabled).
	SlackListen string
	Stale       alert.Thresholds // when sources count as stale; zero values turn a check off
	// StandBy lets Start find another arbiter leading: the service then stands by and takes
	// the lead in the Step that finds the lease free (arbiter.Service.Join).
	StandBy bool
	// History, when set, warms the cost anomaly detectors from the recorded spend at Run's start
	// (the store; nil: they learn from nothing).
	History anomalywatch.History
}

// System is the arbiter service and the parts that run beside it.
type System struct {
	Service *arbiter.Service
	Budgets *arbiter.Budgets
	// Anomalies watches the estate's cost for anomalies (internal/anomalywatch): Run runs it,
	// a caller of Start ticks it.
	Anomalies *anomalywatch.Watcher
	// anomalyMsgs post the anomalies to Slack and take their answers; nil without Slack.
	anomalyMsgs *slack.Anomalies
	// approvals are the held plans' questions, asked in Slack and answered there or in the
	// console (Approvals).
	approvals *slack.Approvals
	parts     []func(context.Context) error
	log       *slog.Logger
	js        jetstream.JetStream // for Ready
	running   atomic.Bool         // the service runs (Run or Start got past the budgets)

	standBy bool
	stop    context.CancelFunc // set by Start
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
}

// New builds the system. It starts nothing: Run does, or Start for a caller that drives the
// service round by round on a virtual clock.
func New(ctx context.Context, o Options) (*System, error) {
	ao := o.Arbiter
	if ao.Log == nil {
		ao.Log = slog.New(slog.DiscardHandler)
	}
	if ao.Config == nil || ao.JS == nil || ao.Actuator == nil {
		return nil, errors.New("the arbiter system needs a fleet config, JetStream and an actuator")
	}
	s := &System{log: ao.Log, js: ao.JS, standBy: o.StandBy}
	b, err := s.budgets(o)
	if err != nil {
		return nil, err
	}
	ao.Gate, ao.Caps = b, b
	if ao.OnCorrupt == nil {
		ao.OnCorrupt = corruptAlerts(o.Slack, s.log)
	}
	svc, err := arbiter.New(ctx, ao)
	if err != nil {
		return nil, err
	}
	b.Attach(svc)
	s.Service, s.Budgets = svc, b
	if err := s.watchAnomalies(ctx, o, svc, b); err != nil {
		return nil, err
	}
	if err := s.alerts(o, svc.Leading); err != nil {
		return nil, err
	}
	return s, nil
}

// Approvals is the console's side of the held plans' questions: the ones Slack asks.
func (s *System) Approvals() ConsoleApprovals { return ConsoleApprovals{A: s.approvals} }

// Run runs every part and the service on their own timers until ctx ends; the service starts
// once the budgets have loaded, so its first plan is judged on them.
func (s *System) Run(ctx context.Context) error {
	var g run.Group
	for _, p := range s.parts {
		addContext(&g, ctx, p)
	}
	addContext(&g, ctx, func(ctx context.Context) error {
		if err := s.Budgets.Ready(ctx); err != nil { // the budget scopes are watched from the start
			return err
		}
		return s.Anomalies.Run(ctx)
	})
	addContext(&g, ctx, func(ctx context.Context) error {
		if err := s.Budgets.Ready(ctx); err != nil {
			return err
		}
		s.running.Store(true)
		defer s.running.Store(false)
		return s.Service.Run(ctx)
	})
	return g.Run()
}

// Start runs the parts beside the service in the background and starts the service without
// timers (arbiter.Service.Start): the caller then drives it with Service.Step. Close stops it.
func (s *System) Start(ctx context.Context) error {
	pctx, stop := context.WithCancel(ctx)
	s.stop = stop
	for _, p := range s.parts {
		s.wg.Go(func() {
			if err := p(pctx); err != nil && pctx.Err() == nil {
				s.mu.Lock()
				s.errs = append(s.errs, err)
				s.mu.Unlock()
				s.log.Error("a part of the arbiter system stopped", "err", err)
			}
		})
	}
	if err := s.Budgets.Ready(ctx); err != nil {
		return err
	}
	start := s.Service.Start
	if s.standBy {
		start = s.Service.Join
	}
	if err := start(ctx); err != nil {
		return fmt.Errorf("starting the arbiter: %w", err)
	}
	s.running.Store(true)
	return nil
}

// Close stops what Start started and returns what failed in the background.
func (s *System) Close() error {
	if s.stop != nil {
		s.stop()
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// addContext adds a part that runs until its context is cancelled, to stop with the group.
func addContext(g *run.Group, parent context.Context, part func(context.Context) error) {
	ctx, cancel := context.WithCancel(parent)
	g.Add(func() error { return part(ctx) }, func(error) { cancel() })
}
