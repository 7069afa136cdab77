// Package reclaim watches the clouds' spot and preemption notices and publishes each one once as
// a capacity.reclaimed event, so the arbiter can replace a replica before its capacity is gone.
//
// One watcher per signal: AWS instance metadata (IMDSv2) and AWS EventBridge through SQS, GCP's
// metadata server and Azure Scheduled Events. Every watcher reports what it saw to a tracker that
// keeps a seen-set per notice, so a notice polled a hundred times is published once, always with
// the same event id (the notice's own time, or the time it was first seen, is the event time).
package reclaim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/events"
)

// Publisher sends one event to the bus. The JetStream publisher in internal/bus satisfies it.
type Publisher interface {
	Publish(ctx context.Context, e events.Event) error
}

// Runner is one long-running watcher. Run returns nil when ctx is cancelled.
type Runner interface {
	Run(ctx context.Context) error
}

// Deps are what the watchers need from the process around them.
type Deps struct {
	Publisher Publisher
	Logger    *slog.Logger
	// Now is the clock; nil means time.Now. Tests inject a fixed or stepped clock.
	Now func() time.Time
	// HTTP is the client for metadata services; nil means a client with no global timeout
	// (every request carries its own deadline).
	HTTP *http.Client
	// Metrics records polls and notices; nil records nothing.
	Metrics *Metrics
}

func (d Deps) withDefaults() Deps {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.HTTP == nil {
		d.HTTP = &http.Client{}
	}
	return d
}

// notice is one reclaim signal as a watcher saw it, before it becomes an event.
type notice struct {
	// key identifies the notice across polls (for example the provider's event id, or the
	// instance, kind and provider time); the seen-set is keyed by it.
	key      string
	kind     events.ReclaimKind
	noticeAt time.Time     // the provider's notice time; zero means "when first seen"
	deadline time.Time     // the provider's deadline; zero means noticeAt + lead
	lead     time.Duration // used when deadline is zero
	where    Placement
	source   string
}

// seenNotice is what the tracker remembers of one notice.
type seenNotice struct {
	lastSeen  time.Time // by the local clock: a notice no longer reported is forgotten after keep
	event     *events.CapacityReclaimed
	published bool
}

// tracker turns notices into events and publishes each one once. A notice whose publish failed
// stays unpublished and is retried on the next poll with the same event time, so its id does
// not change.
type tracker struct {
	pub    Publisher
	m      *Metrics
	now    func() time.Time
	keep   time.Duration // how long a notice is remembered after it was last reported
	logger *slog.Logger

	mu   sync.Mutex
	seen map[string]*seenNotice
}

func newTracker(d Deps) *tracker {
	return &tracker{pub: d.Publisher, m: d.Metrics, now: d.Now, keep: time.Hour, logger: d.Logger,
		seen: make(map[string]*seenNotice)}
}

// report publishes n unless it was published before. It returns the event and whether this call
// published it.
func (t *tracker) report(ctx context.Context, n notice) (*events.CapacityReclaimed, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now().UTC()
	t.pruneLocked(now)
	s, ok := t.seen[n.key]
	if !ok {
		s = &seenNotice{event: t.event(n, now)}
		t.seen[n.key] = s
	}
	s.lastSeen = now
	if s.published {
		return s.event, false, nil
	}
	if err := t.pub.Publish(ctx, s.event); err != nil {
		return s.event, false, fmt.Errorf("publishing %s notice for %s: %w", n.kind, n.where.Instance, err)
	}
	s.published = true
	t.m.notice(s.event)
	t.logger.Info("capacity reclaim notice published", "provider", s.event.Provider,
		"instance", s.event.Instance, "kind", s.event.Kind, "deadline", s.event.Deadline, "id", s.event.ID)
	return s.event, true, nil
}

func (t *tracker) event(n notice, firstSeen time.Time) *events.CapacityReclaimed {
	at := n.noticeAt.UTC()
	if n.noticeAt.IsZero() {
		at = firstSeen
	}
	deadline := n.deadline.UTC()
	if n.deadline.IsZero() {
		deadline = at.Add(n.lead)
	}
	if deadline.Before(at) { // a notice that arrives late is due now, not in the past
		deadline = at
	}
	e := &events.CapacityReclaimed{Meta: events.Meta{At: at}, Provider: n.where.Provider,
		Region: n.where.Region, Location: n.where.Location, Zone: n.where.Zone,
		Instance: n.where.Instance, Node: n.where.Node, Kind: n.kind, NoticeAt: at,
		Deadline: deadline, Source: n.source}
	events.Stamp(e)
	return e
}

// forget drops a notice that the provider says is over, so a later notice of the same kind is
// a new one.
func (t *tracker) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.seen, key)
}

// pruneLocked bounds the seen-set. A notice is forgotten only after its source stopped
// reporting it for keep (an hour, longer than any redelivery or polling gap), so an old notice
// delivered late is still deduplicated.
func (t *tracker) pruneLocked(now time.Time) {
	for k, s := range t.seen {
		if s.published && now.Sub(s.lastSeen) > t.keep {
			delete(t.seen, k)
		}
	}
}

// Placement says where the watched instance is, in the cloud's and in Bursar's terms.
type Placement struct {
	Provider string
	Region   string
	Zone     string
	Location string
	Instance string
	Node     string
}

// errStatus is an unexpected HTTP status from a metadata service.
type errStatus struct {
	url  string // redacted
	code int
}

func (e *errStatus) Error() string {
	return fmt.Sprintf("%s answered HTTP %d", e.url, e.code)
}

// errNotFound is a 404 from a metadata path, which for IMDS means "nothing pending".
var errNotFound = errors.New("not found")

// every calls f now and then every interval until ctx is done; f's errors are logged, never
// fatal, because a metadata service that hiccups must not stop the watcher.
// After failures in a row it waits longer than interval, up to 30 s, so a node without the
// metadata service it expects is not polled flat out.
func every(ctx context.Context, interval time.Duration, d Deps, what string, f func(context.Context) error) error {
	h := newHealth(d, what)
	for {
		wait := interval
		if err := f(ctx); err != nil && ctx.Err() == nil {
			wait = max(wait, h.failed(err))
		} else if err == nil {
			h.ok()
		}
		if backoff.Sleep(ctx, wait) != nil {
			return nil
		}
	}
}

// health logs a watcher's polling failures once per change of state, not once per poll: the
// first failure, then every time the failure count doubles, and the recovery. A watcher on a
// machine without the metadata service it expects would otherwise flood the log.
type health struct {
	log      *slog.Logger
	m        *Metrics
	now      func() time.Time
	what     string
	failures int
}

func newHealth(d Deps, what string) health {
	d = d.withDefaults()
	return health{log: d.Logger, m: d.Metrics, now: d.Now, what: what}
}

// pollBackoff is the wait after failed polls in a row: from a second, doubling, at most 30 s,
// jittered so the watchers of a fleet that lost its metadata service together do not come
// back in lockstep.
var pollBackoff = backoff.Policy{Min: time.Second, Max: 30 * time.Second}

// failed records a failure and returns how long to wait before the next try.
func (h *health) failed(err error) time.Duration {
	h.failures++
	if h.failures&(h.failures-1) == 0 { // 1, 2, 4, 8, ...
		h.log.Warn("reclaim watcher poll failed", "watcher", h.what, "failures_in_a_row", h.failures, "err", err)
	}
	h.record()
	return pollBackoff.Delay(h.failures)
}

func (h *health) ok() {
	if h.failures > 0 {
		h.log.Info("reclaim watcher recovered", "watcher", h.what, "after_failures", h.failures)
	}
	h.failures = 0
	h.record()
}

// record counts the poll just made in the watcher's metrics.
func (h *health) record() {
	if h.m != nil {
		h.m.poll(h.what, h.failures, h.now())
	}
}
