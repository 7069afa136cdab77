package alert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	slackapi "github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// Poster sends an alert to the channel (*slack.Notifier).
type Poster interface {
	Post(ctx context.Context, a slack.Alert) (string, error)
}

var _ Poster = (*slack.Notifier)(nil)

// Clock tells the time for the checks that depend on it (stale sources, reclaim deadlines).
type Clock interface{ Now() time.Time }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now().UTC() }

// Options configure a Service.
type Options struct {
	JS         jetstream.JetStream
	Poster     Poster
	Leading    func() bool // whether this arbiter leads now; nil when there is no lease (one arbiter)
	Thresholds Thresholds
	Clock      Clock         // default: the wall clock, UTC
	Every      time.Duration // how often time-based checks run (default 15s)
	RetryDelay time.Duration // first wait before re-posting an alert Slack refused (default 2s, doubling with jitter)
	Log        *slog.Logger
	Registry   prometheus.Registerer // optional
}

// postMaxWait caps the wait between two tries of an alert (Slack's own Retry-After may be longer).
const postMaxWait = time.Minute

// postTimeout bounds one try: a Slack that answers slowly costs the try, not the queue behind it.
const postTimeout = 15 * time.Second

// postTries is how often an alert is tried before it is dropped with an error in the log.
const postTries = 4

// Service follows the streams, feeds a Tracker and posts its alerts while this arbiter leads.
//
// Every arbiter follows (ordered consumers from a lookback window, like the arbiter's own view),
// so a standby's tracker is as warm as the leader's and, when it takes over, announces neither
// what the old leader already announced nor a burst of old news. What the backlog read at start
// completes is not posted. The price of this simplicity: an alert falling in the seconds between
// a leader's death and its successor's lease is not posted by either.
type Service struct {
	o       Options
	log     *slog.Logger
	started time.Time // stream times before this are backlog

	mu sync.Mutex
	tr *Tracker

	caught atomic.Bool
	queue  chan slack.Alert
	alerts *prometheus.CounterVec
}

// New returns a service; Run starts it.
func New(o Options) (*Service, error) {
	if o.JS == nil || o.Poster == nil || o.Log == nil {
		return nil, errors.New("alert: JS, Poster and Log are required")
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Leading == nil {
		o.Leading = func() bool { return true }
	}
	if o.Every <= 0 {
		o.Every = 15 * time.Second
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 2 * time.Second
	}
	s := &Service{o: o, log: o.Log.With("part", "alerts"), tr: NewTracker(o.Thresholds), queue: make(chan slack.Alert, 256),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_alerts_total",
			Help: "Slack alerts by kind and outcome (posted, failed, dropped: queue full, standby: not leading)."},
			[]string{"kind", "outcome"})}
	if o.Registry != nil {
		if err := o.Registry.Register(s.alerts); err != nil {
			return nil, fmt.Errorf("registering alert metrics: %w", err)
		}
	}
	return s, nil
}

// Run follows the streams until ctx ends. Time-based checks start once every backlog is read.
func (s *Service) Run(ctx context.Context) error {
	s.started = time.Now()
	ctx, cancel := context.WithCancel(ctx) // also stops the poster and consumers when following fails
	posting := make(chan struct{})
	go func() { defer close(posting); s.postLoop(ctx) }()
	defer func() { cancel(); <-posting }()
	if err := s.follow(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	s.caught.Store(true)
	s.log.Info("alerts are on", "stale_prices", s.o.Thresholds.Prices, "stale_telemetry", s.o.Thresholds.Telemetry)
	t := time.NewTicker(s.o.Every)
	defer t.Stop()
	for {
		s.tick(s.o.Clock.Now())
		s.checkFills(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// input is one ordered consumer: what it reads and how far back it starts.
type input struct {
	stream   string
	subjects []string
	lookback time.Duration
}

// inputs lists what to read, in the order the backlogs are read: the fleet first, so a reclaim
// notice read from the backlog finds the replicas it falls on. Prices and telemetry are read
// back further than their thresholds, to learn of sources that went silent before the start.
func (s *Service) inputs() []input {
	recent := lateGrace + 15*time.Minute
	in := []input{
		{bus.Fleet, []string{"bursar.fleet.>", "bursar.action.>", "bursar.decision.>"}, recent},
		{bus.Market, []string{"bursar.reclaim.>"}, recent},
		{bus.DLQ, []string{bus.DLQSubjects}, recent},
	}
	if th := s.o.Thresholds.Prices; th > 0 {
		in = append(in, input{bus.Market, []string{"bursar.price.>"}, th + th/2})
	}
	if th := s.o.Thresholds.Telemetry; th > 0 {
		in = append(in, input{bus.Telemetry, []string{"bursar.gpu.>", "bursar.tokens.>"}, th + th/2})
	}
	return in
}

// follow starts the inputs one after the other, each once the one before has read its backlog.
func (s *Service) follow(ctx context.Context) error {
	for _, in := range s.inputs() {
		caught, err := s.consume(ctx, in)
		if err != nil {
			return err
		}
		select {
		case <-caught:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// consume starts one ordered consumer; the channel closes when its backlog is read.
func (s *Service) consume(ctx context.Context, in input) (<-chan struct{}, error) {
	caught := make(chan struct{})
	done := sync.OnceFunc(func() { close(caught) })
	start := s.started.Add(-in.lookback)
	cons, err := s.o.JS.OrderedConsumer(ctx, in.stream, jetstream.OrderedConsumerConfig{FilterSubjects: in.subjects,
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &start})
	if err != nil {
		return nil, fmt.Errorf("alerts: following %v on %s: %w", in.subjects, in.stream, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		md, err := m.Metadata()
		backlog := err == nil && md.Timestamp.Before(s.started)
		if in.stream == bus.DLQ {
			s.refused(m, backlog)
		} else {
			s.handle(m.Subject(), m.Data(), backlog)
		}
		if err == nil && md.NumPending == 0 {
			done()
		}
	})
	if err != nil {
		return nil, fmt.Errorf("alerts: following %v on %s: %w", in.subjects, in.stream, err)
	}
	if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
		done()
	}
	go func() { <-ctx.Done(); cc.Stop() }()
	return caught, nil
}

// handle folds one message: one event, or each event of a batch in order. One that does not
// decode is skipped: the recorder's durable consumer dead-letters it, and an alert is no reason
// to stop.
func (s *Service) handle(subject string, data []byte, backlog bool) {
	evs, err := events.DecodeAll(data)
	if err != nil {
		s.log.Warn("skipping an event that does not decode", "subject", subject, "err", err)
		return
	}
	var alerts []slack.Alert
	s.mu.Lock()
	for _, e := range evs {
		if err := events.CheckSubject(e.EventType(), subject); err != nil {
			s.log.Warn("skipping an event on a subject of another type", "err", err) // the arbiter refuses it
			continue
		}
		alerts = append(alerts, s.tr.Observe(e)...)
	}
	s.mu.Unlock()
	for _, a := range alerts {
		if backlog {
			s.log.Debug("not posting an alert completed by the backlog", "alert", a.Text())
			continue
		}
		s.send(a)
	}
}

// refused alerts on a DLQ copy of a message a part refused to act on (bus.HeaderRefusedBy); other
// dead messages (undecodable, unstorable) are the recorder's metrics' to count.
func (s *Service) refused(m jetstream.Msg, backlog bool) {
	by := m.Headers().Get(bus.HeaderRefusedBy)
	if by == "" || backlog {
		return
	}
	a := slack.EventRefused{By: by, Subject: m.Headers().Get(bus.HeaderOriginalSubject),
		Reason: m.Headers().Get(bus.HeaderReason), At: s.o.Clock.Now()}
	if md, err := m.Metadata(); err == nil {
		a.At = md.Timestamp.UTC()
	}
	s.send(a)
}

// tick runs the time-based checks, once every backlog is read.
func (s *Service) tick(now time.Time) {
	if !s.caught.Load() {
		return
	}
	s.mu.Lock()
	alerts := s.tr.Tick(now)
	s.mu.Unlock()
	for _, a := range alerts {
		s.send(a)
	}
}

// checkFills alerts on the streams filling up to their byte limits.
func (s *Service) checkFills(ctx context.Context) {
	if s.o.Thresholds.Fill <= 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fills, err := bus.Fills(rctx, s.o.JS)
	if err != nil {
		s.log.Warn("cannot read how full the streams are", "err", err)
		return
	}
	s.mu.Lock()
	alerts := s.tr.Fills(fills)
	s.mu.Unlock()
	for _, a := range alerts {
		s.send(a)
	}
}

// send queues an alert for posting, on the leader only. It never blocks a consumer: with the
// queue full (Slack down for long), the alert is dropped and logged.
func (s *Service) send(a slack.Alert) {
	kind := kindOf(a)
	if !s.o.Leading() {
		s.alerts.WithLabelValues(kind, "standby").Inc()
		s.log.Debug("not posting: this arbiter does not lead", "alert", a.Text())
		return
	}
	select {
	case s.queue <- a:
	default:
		s.alerts.WithLabelValues(kind, "dropped").Inc()
		s.log.Error("alert queue full; alert dropped", "alert", a.Text())
	}
}

func (s *Service) postLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case a := <-s.queue:
			s.post(ctx, a)
		}
	}
}

// post tries an alert a few times, waiting longer each time and at least as long as Slack asks
// when it rate-limits.
func (s *Service) post(ctx context.Context, a slack.Alert) {
	kind := kindOf(a)
	retry := backoff.Policy{Min: s.o.RetryDelay, Max: postMaxWait}
	for try := 1; ; try++ {
		pctx, cancel := context.WithTimeout(ctx, postTimeout)
		_, err := s.o.Poster.Post(pctx, a)
		cancel()
		if err == nil {
			s.alerts.WithLabelValues(kind, "posted").Inc()
			s.log.Info("alert posted", "kind", kind, "alert", a.Text())
			return
		}
		if try == postTries || ctx.Err() != nil {
			s.alerts.WithLabelValues(kind, "failed").Inc()
			s.log.Error("could not post an alert to slack; dropped", "alert", a.Text(), "tries", try, "err", err)
			return
		}
		var asked time.Duration
		var rl *slackapi.RateLimitedError
		if errors.As(err, &rl) {
			asked = rl.RetryAfter
		}
		wait := retry.AtLeast(try, asked)
		s.log.Warn("posting an alert failed; will retry", "alert", a.Text(), "try", try, "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func kindOf(a slack.Alert) string {
	switch a.(type) {
	case slack.ReclaimHandled:
		return "reclaim_handled"
	case slack.ReclaimMissed:
		return "reclaim_missed"
	case slack.ActionFailed:
		return "action_failed"
	case slack.SourceStale:
		return "source_stale"
	case slack.SourceBack:
		return "source_back"
	case slack.EventRefused:
		return "event_refused"
	case slack.StreamFilling:
		return "stream_filling"
	}
	return "other"
}
