// Package collect runs price sources on their schedules and publishes what changed. It keeps
// the last good catalog per source, publishes a price.observed event only when an offer's price
// changes (plus a full snapshot on start and on a slow schedule so a new consumer can rebuild),
// and marks a source stale after repeated failures instead of going quiet.
package collect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// Source is one price source: a provider API or a price file.
type Source interface {
	Name() string
	Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error)
}

// Publisher is where price events go, a run's changes together in batch messages (one per
// provider and region, see events.DecodeAll). internal/bus.Publisher in production.
type Publisher interface {
	PublishBatch(ctx context.Context, evs []events.Event) error
}

// The behaviours the collector reads from a source's error, when it has them
// (pricesource.Error has all three).
type (
	kinded     interface{ ErrorKind() string }
	retryAfter interface{ RetryAfterDelay() time.Duration }
	retryable  interface{ Retryable() bool }
)

// Job is one source and how to run it.
type Job struct {
	Source     Source
	Schedule   string        // cron spec or @every descriptor
	Jitter     time.Duration // up to this much random delay after each scheduled time
	Timeout    time.Duration // per attempt
	Retries    int           // attempts after the first
	Backoff    time.Duration // first retry delay, doubled each retry
	MaxBackoff time.Duration
	StaleAfter int // failed runs in a row before the source is marked stale
}

// Collector holds each source's last good catalog and publishes changes.
type Collector struct {
	pub     Publisher
	log     *slog.Logger
	metrics *Metrics

	mu    sync.Mutex
	state map[string]*sourceState
}

type sourceState struct {
	catalog   pricing.Catalog          // last good catalog
	published map[string]pricing.Offer // last published offer per key
	failures  int
	stale     bool
}

// New returns a collector publishing to pub. metrics may be nil.
func New(pub Publisher, log *slog.Logger, metrics *Metrics) *Collector {
	return &Collector{pub: pub, log: log, metrics: metrics, state: map[string]*sourceState{}}
}

// Catalog returns the last good catalog of a source.
func (c *Collector) Catalog(source string) (pricing.Catalog, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.state[source]
	if !ok || s.catalog.Offers == nil {
		return pricing.Catalog{}, false
	}
	return s.catalog, true
}

// Stale reports whether a source has failed StaleAfter runs in a row.
func (c *Collector) Stale(source string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.state[source]
	return ok && s.stale
}

func (c *Collector) stateOf(name string) *sourceState {
	s, ok := c.state[name]
	if !ok {
		s = &sourceState{published: map[string]pricing.Offer{}}
		c.state[name] = s
	}
	return s
}

// RunOnce fetches job's source (with retries) at time at and publishes what changed, or every
// offer when snapshot is set. A failed fetch keeps the last good catalog and publishes nothing.
// It returns the number of events published.
func (c *Collector) RunOnce(ctx context.Context, job Job, at time.Time, snapshot bool) (int, error) {
	name := job.Source.Name()
	cat, err := c.fetch(ctx, job, at)
	if err == nil {
		err = c.checkNotEmpty(name, cat)
	}
	if err != nil {
		c.failed(ctx, job, err)
		return 0, err
	}
	c.metrics.success(name, at, cat)
	n, err := c.publish(ctx, name, cat, at, snapshot)
	c.metrics.addPublished(name, n)
	if err != nil {
		c.failed(ctx, job, err)
		return n, err
	}
	c.mu.Lock()
	s := c.stateOf(name)
	s.catalog, s.failures, s.stale = cat, 0, false
	c.mu.Unlock()
	c.metrics.setStale(name, false)
	if u := cat.UnknownCount(); u > 0 {
		c.log.Warn("price rows with unknown GPU names", "source", name, "rows", u, "names", cat.Unknown)
	}
	for _, w := range cat.Warnings {
		c.log.Warn("price rows disagree", "source", name, "warning", w)
	}
	c.log.Info("prices collected", "source", name, "offers", len(cat.Offers), "published", n, "snapshot", snapshot)
	return n, nil
}

// EmptyError is a source that answered with no offers where its last good catalog had some:
// an error page with status 200, a filter gone wrong, a provider's outage. It is a failed run,
// so the last good catalog stays and the source goes stale, instead of every offer vanishing.
type EmptyError struct {
	Source string
	Had    int // offers in the last good catalog
}

func (e *EmptyError) Error() string {
	return fmt.Sprintf("%s answered with no offers (its last good catalog had %d); keeping that catalog", e.Source, e.Had)
}

// ErrorKind is the metric label of an empty answer.
func (e *EmptyError) ErrorKind() string { return "empty" }

// checkNotEmpty fails an empty catalog from a source whose last good one had offers.
func (c *Collector) checkNotEmpty(name string, cat pricing.Catalog) error {
	if len(cat.Offers) > 0 {
		return nil
	}
	c.mu.Lock()
	had := len(c.stateOf(name).catalog.Offers)
	c.mu.Unlock()
	if had == 0 {
		c.log.Warn("price source answered with no offers", "source", name, "skipped", cat.Skipped, "unknown", cat.Unknown)
		return nil
	}
	return &EmptyError{Source: name, Had: had}
}

// publish sends an event for every offer whose price differs from the last one published
// (every offer on a snapshot), all in one PublishBatch. The offers are remembered as published
// only once the batch is, so a failure is repaired by the next run. An offer observed more than
// events.MaxSkew after the run's time (a source's clock, or data dated ahead) is refused.
func (c *Collector) publish(ctx context.Context, name string, cat pricing.Catalog, at time.Time, snapshot bool) (int, error) {
	c.mu.Lock()
	prev := c.stateOf(name).published
	c.mu.Unlock()
	seen := make(map[string]bool, len(cat.Offers))
	var changed []pricing.Offer
	var evs []events.Event
	for _, o := range cat.Offers {
		k := o.Key()
		seen[k] = true
		if old, ok := prev[k]; ok && !snapshot && old.PricePerHour == o.PricePerHour {
			continue
		}
		e := Event(o)
		if err := events.ValidateAt(events.Stamp(e), at); err != nil {
			return 0, fmt.Errorf("publishing %s: %w", k, err)
		}
		changed, evs = append(changed, o), append(evs, e)
	}
	if len(evs) > 0 {
		if err := c.pub.PublishBatch(ctx, evs); err != nil {
			return 0, fmt.Errorf("publishing %d prices: %w", len(evs), err)
		}
	}
	c.mu.Lock()
	for _, o := range changed {
		prev[o.Key()] = o
	}
	for k := range prev {
		if !seen[k] {
			delete(prev, k) // gone from the catalog: a return is a change
		}
	}
	c.mu.Unlock()
	return len(evs), nil
}

// failed records a failed run: it counts toward staleness and the error metric, and is logged.
// A run cut short because ctx ended is no failure of the source: the collector is stopping, and
// counting it would raise an alert (or mark the source stale) on every deploy.
func (c *Collector) failed(ctx context.Context, job Job, err error) {
	name := job.Source.Name()
	if ctx.Err() != nil {
		c.log.Debug("price collection stopped by shutdown", "source", name, "err", err)
		return
	}
	c.mu.Lock()
	s := c.stateOf(name)
	s.failures++
	becameStale := job.StaleAfter > 0 && s.failures >= job.StaleAfter && !s.stale
	if becameStale {
		s.stale = true
	}
	failures := s.failures
	c.mu.Unlock()
	c.metrics.failure(name, errorKind(err))
	if becameStale {
		c.metrics.setStale(name, true)
		c.log.Error("price source is stale: keeping its last good catalog", "source", name,
			"failed_runs", failures, "err", err)
		return
	}
	c.log.Warn("price collection failed", "source", name, "failed_runs", failures, "err", err)
}

// Event maps an offer to its price.observed event, observed at the offer's time.
func Event(o pricing.Offer) *events.PriceObserved {
	return &events.PriceObserved{
		Meta:     events.Meta{At: o.ObservedAt.UTC()},
		Provider: o.Provider, Region: o.Region, Zone: o.Zone, InstanceType: o.InstanceType,
		GPUModel: o.GPU, GPUCount: o.GPUCount, GPUMemoryGB: float64(o.GPUMemoryGB),
		Market: events.Market(o.Market), USDPerHour: o.PricePerHour, Source: o.Source,
	}
}

func errorKind(err error) string {
	var k kinded
	if errors.As(err, &k) {
		return k.ErrorKind()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "other"
}
