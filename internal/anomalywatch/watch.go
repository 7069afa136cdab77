// Package anomalywatch is the arbiter's cost anomaly watcher: every 5 minutes of the arbiter's
// clock it samples what each group of replicas costs now (arbiter.Service.Burning), sorts the
// series into scopes (each workload, team and budget policy), feeds each scope's detector
// (anomaly.Scope), publishes every change as a cost.anomaly event, posts each anomaly opened to
// people (Slack) unless its cause was answered as expected, and keeps the answers
// (bus.BucketAnomalyAnswers). It runs beside the service, never on the path from a reclaim to
// its action. docs/anomalies.md says what it finds and how well.
package anomalywatch

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Spend says what runs now and what it costs; *arbiter.Service is one.
type Spend interface{ Burning() []arbiter.Burn }

// Publisher publishes an event and returns once JetStream has it; *bus.Publisher is one.
type Publisher interface {
	Publish(ctx context.Context, e events.Event) error
}

// Poster tells people of an anomaly just opened (Slack, with Expected / Not expected buttons).
type Poster interface {
	Post(ctx context.Context, e *events.CostAnomaly) error
}

// Clock tells the time; the arbiter's, so that replays and tests drive the watcher.
type Clock interface{ Now() time.Time }

// Options configure a Watcher. Config, Spend and Publisher are required.
type Options struct {
	Config    *fleet.Config
	Spend     Spend
	Publisher Publisher
	Clock     Clock                  // default: the wall clock
	Policies  func() []budget.Policy // the budget scopes; nil: none
	Leading   func() bool            // only the leader publishes and posts; nil: always
	Answers   jetstream.KeyValue     // bus.BucketAnomalyAnswers; nil: answers last until a restart
	Poster    Poster                 // nil: anomalies are published, not posted
	Remedies  Remedier               // nil: no remedy is proposed (remedy.go)
	Detector  anomaly.Config         // zero: anomaly.DefaultConfig() (a 5-minute step)
	Currency  string                 // default USD
	Every     time.Duration          // how often Run reads the clock (default 30s)
	Registry  prometheus.Registerer  // nil: metrics are kept but not registered
	// History, when set, is read at Run's start to warm the detectors over WarmFor (default 7
	// days, the detector's spread window) of recorded spend; nil: they learn from nothing.
	History History
	WarmFor time.Duration
	Log     *slog.Logger
}

// Watcher watches the estate's cost for anomalies.
type Watcher struct {
	o Options
	m *metrics

	tmu    sync.Mutex // one Tick at a time: guards scopes, next and unsent
	scopes map[string]*anomaly.Scope
	next   time.Time       // the end of the next step to observe
	unsent []change        // changes not yet acked by JetStream, in order
	open   map[string]bool // the anomalies open now, by id

	qmu   sync.Mutex
	quiet anomaly.Quieter
}

// change is one anomaly change, as published and as the quieter judges it.
type change struct {
	ev *events.CostAnomaly
	a  anomaly.Anomaly
}

// New returns a watcher; Run starts it, or the caller drives it with Tick.
func New(o Options) (*Watcher, error) {
	if o.Config == nil || o.Spend == nil || o.Publisher == nil {
		return nil, errors.New("the anomaly watcher needs a fleet config, the arbiter's spend and a publisher")
	}
	if o.Clock == nil {
		o.Clock = arbiter.WallClock{}
	}
	if o.Detector.Step <= 0 {
		o.Detector = anomaly.DefaultConfig()
	}
	if o.Every <= 0 {
		o.Every = 30 * time.Second
	}
	if o.WarmFor <= 0 {
		o.WarmFor = 7 * 24 * time.Hour
	}
	o.Currency = cmp.Or(o.Currency, "USD")
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{o: o, m: newMetrics(o.Registry), scopes: map[string]*anomaly.Scope{}, open: map[string]bool{}}, nil
}

// warmTime bounds the read of the history at start: a slow store delays the watcher's first
// step, never the arbiter.
const warmTime = 2 * time.Minute

// Run warms the detectors from the history, loads the answers, follows new ones and ticks every
// Options.Every until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	if w.o.History != nil {
		wctx, cancel := context.WithTimeout(ctx, warmTime)
		if err := w.Warm(wctx, w.o.History, w.o.WarmFor); err != nil {
			w.o.Log.Warn("anomaly detectors not warmed; they learn from now", "err", err)
		}
		cancel()
	}
	if w.o.Answers != nil {
		if err := w.follow(ctx); err != nil {
			return err
		}
	}
	t := time.NewTicker(w.o.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.Tick(ctx)
		}
	}
}

// maxCatchUp bounds the steps one Tick observes after a pause (a stalled process, a jump of
// the clock): more would feed the detectors a long flat stretch nobody saw.
const maxCatchUp = 12

// Tick observes every step that ended since the last Tick, at most maxCatchUp of them, each with
// the spend running now, and publishes (and posts) what changed. A change JetStream did not take
// is published again, in order, on the next Tick.
func (w *Watcher) Tick(ctx context.Context) {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	step := w.o.Detector.Step
	end := w.o.Clock.Now().Truncate(step)
	if w.next.IsZero() {
		w.next = end
	}
	if end.Sub(w.next) >= maxCatchUp*step {
		w.next = end.Add(-(maxCatchUp - 1) * step)
	}
	if w.next.After(end) {
		return
	}
	sample := Sample(w.o.Config, w.policies(), w.o.Spend.Burning())
	leading := w.o.Leading == nil || w.o.Leading()
	for ; !w.next.After(end); w.next = w.next.Add(step) {
		for _, c := range w.observe(sample, w.next) {
			if leading {
				w.unsent = append(w.unsent, c)
			}
		}
	}
	w.send(ctx)
}

func (w *Watcher) policies() []budget.Policy {
	if w.o.Policies == nil {
		return nil
	}
	return w.o.Policies()
}

// observe feeds one step ending at end to every scope and returns the changes, in scope order.
func (w *Watcher) observe(sample map[string]map[string]anomaly.Child, end time.Time) []change {
	for k := range w.scopes {
		if _, ok := sample[k]; !ok {
			delete(w.scopes, k) // a workload or policy gone: its history goes with it
		}
	}
	var out []change
	for _, k := range slices.Sorted(maps.Keys(sample)) {
		s := w.scopes[k]
		if s == nil {
			s = anomaly.NewScope(k, w.o.Detector)
			w.scopes[k] = s
		}
		for _, e := range s.Observe(end.Add(-w.o.Detector.Step), sample[k]) {
			out = append(out, change{ev: Event(e, end, w.o.Currency), a: e.Anomaly})
			if e.Change == anomaly.Closed {
				delete(w.open, e.Anomaly.ID())
			} else {
				w.open[e.Anomaly.ID()] = true
			}
		}
	}
	w.m.open.Set(float64(len(w.open)))
	return out
}

// send publishes the unsent changes in order and posts the anomalies opened whose cause nobody
// answered as expected; it stops at the first publish that fails.
func (w *Watcher) send(ctx context.Context) {
	defer func() { w.m.unsent.Set(float64(len(w.unsent))) }()
	for len(w.unsent) > 0 {
		c := w.unsent[0]
		pctx, cancel := context.WithTimeout(ctx, outsideCall)
		err := w.o.Publisher.Publish(pctx, events.Stamp(c.ev))
		cancel()
		if err != nil {
			w.o.Log.Warn("cost anomaly not published; trying again next step", "anomaly", c.ev.Anomaly, "err", err)
			return
		}
		w.unsent = w.unsent[1:]
		w.m.changes.WithLabelValues(c.ev.State).Inc()
		w.o.Log.Info("cost anomaly", "anomaly", c.ev.Anomaly, "state", c.ev.State, "series", c.ev.Series,
			"expected", c.ev.Expected, "observed", c.ev.Observed, "impact", c.ev.Impact, "moved", c.ev.Moved)
		if c.ev.State == StateOpen && w.o.Poster != nil {
			w.post(ctx, c)
		}
		w.remedy(ctx, c)
	}
}

// post tells people of an anomaly opened, unless its cause was answered as expected.
func (w *Watcher) post(ctx context.Context, c change) {
	if !w.alert(c.a) {
		w.m.posts.WithLabelValues("quieted").Inc()
		return
	}
	octx, cancel := context.WithTimeout(ctx, outsideCall)
	defer cancel()
	if err := w.o.Poster.Post(octx, c.ev); err != nil {
		w.m.posts.WithLabelValues("failed").Inc()
		w.o.Log.Warn("posting a cost anomaly", "anomaly", c.ev.Anomaly, "err", err)
		return
	}
	w.m.posts.WithLabelValues("posted").Inc()
}

// outsideCall bounds one call to JetStream or Slack.
const outsideCall = 10 * time.Second

func (w *Watcher) alert(a anomaly.Anomaly) bool {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return w.quiet.Alert(a)
}

// Unsent is how many changes wait to be published.
func (w *Watcher) Unsent() int {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	return len(w.unsent)
}

// PostFunc is a Poster made of a function (the Slack adapter in internal/system).
type PostFunc func(ctx context.Context, e *events.CostAnomaly) error

// Post calls f.
func (f PostFunc) Post(ctx context.Context, e *events.CostAnomaly) error { return f(ctx, e) }
