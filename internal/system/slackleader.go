package system

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	slackapi "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/slack"
)

// Only the leading arbiter holds the pending approvals, so Slack's clicks must reach it. In Socket
// Mode only the leader holds a connection: Slack hands each interaction to one of an app's open
// connections at random (slackapi/bolt-python#448), so a standby's would take half the clicks. Over
// HTTP every arbiter serves the endpoint (a Service picks either pod), and a standby hands each
// verified click to the leader over NATS (bus.SlackClickSubject).
const (
	// leadPoll is how often a part that runs while this arbiter leads checks the lead: well
	// within the lease's renewal (a quarter of its TTL, 2.5 s by default).
	leadPoll = 500 * time.Millisecond
	// clickWait bounds a standby's wait for the leader: Slack gives up on an answer after 3 s.
	clickWait = 2500 * time.Millisecond
	// clickWork bounds the leader's handling of a forwarded click (a few Slack API calls). It
	// outlasts clickWait: a click the leader has begun is carried through even if the standby
	// answered Slack 503 meanwhile (the user then sees an error, and a second click finds the
	// approval decided).
	clickWork = 15 * time.Second
	// clickWorkers are the forwarded clicks the leader handles at once, as its own endpoint
	// would: one waiting on a slow Slack does not hold the others past clickWait.
	clickWorkers = 8
)

// leading says whether this system's arbiter leads now; false until the service is built.
func (s *System) leading() bool { return s.Service != nil && s.Service.Leading() }

// slackSocket is the Socket Mode part: a connection opened each time this arbiter starts leading
// and closed when it stops, so a standby never receives a click.
//
// A click during a lease handover: for up to leadPoll either no arbiter holds a connection or
// the old leader still does. Slack redelivers an Events API envelope nobody acknowledged, but
// it does not redeliver a click: one no connection takes is shown to the user as failed, and
// one the old leader acknowledges after losing the lead changes nothing (its approvals cannot
// apply it, and tell the user to try again). Either way the question stays pending in the
// books; the new leader asks it again on taking the lead (resuming the same message), and the
// user's next click decides it.
func (s *System) slackSocket(sc slack.Config, buttons slack.ButtonHandler) func(context.Context) error {
	return func(ctx context.Context) error {
		return whileLeading(ctx, s.leading, leadPoll, func(ctx context.Context) error {
			_, socket := sc.Client() // a fresh client per lead: its events are this connection's
			s.log.Info("leading: opening the slack socket mode connection")
			defer s.log.Info("slack socket mode connection closed")
			return slack.RunSocketMode(ctx, socket, buttons, s.log)
		})
	}
}

// slackEndpoint is the HTTP part: every arbiter serves the endpoint and verifies each click
// there; a standby forwards the verified callback to the leader, which serves the forwarded
// clicks while it leads.
func (s *System) slackEndpoint(addr string, v *slack.Verifier, buttons slack.ButtonHandler, nc *nats.Conn) []func(context.Context) error {
	f := &slack.Forwarder{Local: buttons, Leading: s.leading,
		Leader: func(ctx context.Context, cb slackapi.InteractionCallback) error { return askLeader(ctx, nc, cb) }}
	h := slack.NewInteractionHandler(v, f, s.log)
	serve := func(ctx context.Context) error { return serveInteractions(ctx, addr, h, s.log) }
	forwarded := func(ctx context.Context) error {
		return whileLeading(ctx, s.leading, leadPoll, func(ctx context.Context) error {
			return serveClicks(ctx, nc, buttons, s.log)
		})
	}
	return []func(context.Context) error{serve, forwarded}
}

// askLeader hands cb to the leading arbiter and returns its outcome: nil when it took the click,
// its refusal otherwise, or an error wrapping slack.ErrNoLeader when none answered in clickWait.
func askLeader(ctx context.Context, nc *nats.Conn, cb slackapi.InteractionCallback) error {
	data, err := slack.EncodeClick(cb)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, clickWait)
	defer cancel()
	_, err = bus.Ask(ctx, nc, bus.SlackClickSubject, data)
	var refused *bus.ReplyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &refused):
		return fmt.Errorf("the leading arbiter: %s", refused.Reason)
	default:
		return fmt.Errorf("handing a slack click to the leading arbiter: %w: %w", slack.ErrNoLeader, err)
	}
}

// serveClicks answers the clicks standbys forward, until ctx ends: the leader runs it. In a
// handover the old leader may serve for up to leadPoll beside the new one; the queue group gives
// each click to one of them, so a click is never both decided and refused.
func serveClicks(ctx context.Context, nc *nats.Conn, buttons slack.ButtonHandler, log *slog.Logger) error {
	sub, err := bus.Serve(ctx, nc, bus.Service{Name: "forwarded slack click", Subject: bus.SlackClickSubject,
		Queue: "bursar-leader", Timeout: clickWork, Workers: clickWorkers, Log: log,
		Handle: func(ctx context.Context, r bus.Request) ([]byte, error) {
			cb, err := slack.DecodeClick(r.Data)
			if err != nil {
				return nil, err
			}
			return nil, buttons.Handle(ctx, cb)
		}})
	if err != nil {
		return err
	}
	<-ctx.Done()
	_ = sub.Unsubscribe()
	return nil
}

// whileLeading runs part while leading says this arbiter leads, checking every `every`: it
// starts part when the lead is taken and cancels it when the lead is lost. A part that fails
// while leading ends whileLeading with its error, as it would end the arbiter without a lease;
// one that returns nil is started again at the next check if the lead holds.
func whileLeading(ctx context.Context, leading func() bool, every time.Duration, part func(context.Context) error) error {
	t := time.NewTicker(every)
	defer t.Stop()
	var run *running
	defer func() { run.halt() }()
	for {
		switch lead := leading(); {
		case lead && run == nil:
			run = begin(ctx, part)
		case !lead && run != nil:
			run.halt()
			run = nil
		}
		var done <-chan error
		if run != nil {
			done = run.done
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			run.stop()
			run = nil
			if err != nil {
				return err
			}
			select { // not again before the next check: a part that keeps ending must not spin
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		case <-t.C:
		}
	}
}

// running is a part started by whileLeading.
type running struct {
	stop context.CancelFunc
	done chan error
}

func begin(ctx context.Context, part func(context.Context) error) *running {
	ctx, stop := context.WithCancel(ctx)
	r := &running{stop: stop, done: make(chan error, 1)}
	go func() { r.done <- part(ctx) }()
	return r
}

// halt cancels the part and waits for it to end; what it returns once cancelled is no failure.
func (r *running) halt() {
	if r == nil {
		return
	}
	r.stop()
	<-r.done
}
