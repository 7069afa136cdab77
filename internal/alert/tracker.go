// Package alert tells the Slack channel what happened on the bus that someone should know:
// reclaims handled (or not in time), actions that failed, and sources gone stale and back. It
// follows the streams beside the arbiter instead of hooking into its planning, so what it says is
// what the audit log says. Budget thresholds are posted by the arbiter's budgets, not here.
//
// The Tracker is the pure part: events and times in, alerts out. The Service feeds it from
// JetStream and posts what it returns, on the leading arbiter only.
package alert

import (
	"cmp"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

// Default stale thresholds. The collector publishes a price only when it changes, and every
// offer again at its snapshot (collector.yaml `snapshot`, default every 6h), so a price source
// that is merely quiet is silent for up to that long; GPU and token samples come every few
// seconds to a minute.
const (
	DefaultPriceStale     = 7 * time.Hour
	DefaultTelemetryStale = 2 * time.Minute
)

// Thresholds say how long a source may be silent before it is stale. Zero turns the check off.
type Thresholds struct {
	Prices    time.Duration // price.observed, per source and provider
	Telemetry time.Duration // gpu.sample and tokens.sample, per location
	Fill      float64       // share of a stream's byte limit (bus.DefaultFillAlert)
}

// failedMemory is how long a failed action is remembered, so a re-sent failure is not alerted twice.
const failedMemory = 24 * time.Hour

// Tracker turns events into alerts. It does no I/O and reads no clock: Observe takes each event's
// own time, Tick the time now. It is not safe for concurrent use.
type Tracker struct {
	th       Thresholds
	failed   map[string]time.Time // workload/action id -> when it failed
	sources  map[string]*source
	reclaims *reclaims
	filling  map[string]bool // streams announced over the fill threshold
}

// NewTracker returns a tracker with the given thresholds.
func NewTracker(th Thresholds) *Tracker {
	return &Tracker{th: th, failed: map[string]time.Time{}, sources: map[string]*source{}, reclaims: newReclaims(), filling: map[string]bool{}}
}

// Observe folds one event and returns the alerts it completes.
func (t *Tracker) Observe(e events.Event) []slack.Alert {
	switch e := e.(type) {
	case *events.PriceObserved:
		return t.heard(priceSource(e), t.th.Prices, e.At)
	case *events.GPUSample:
		return t.heard("GPU samples from "+e.Location, t.th.Telemetry, e.At)
	case *events.TokensSample:
		return t.heard("token counters from "+e.Location, t.th.Telemetry, e.At)
	case *events.CapacityReclaimed:
		return t.reclaims.notice(e)
	case *events.PlanDecided:
		t.reclaims.plan(e)
	case *events.ReplicaState:
		return t.reclaims.state(e)
	case *events.ActionUpdated:
		return append(t.failure(e), t.reclaims.action(e)...)
	}
	return nil
}

// Tick returns what time alone tells: sources silent for too long, reclaim deadlines passed
// without a replacement ready. It also forgets what is too old to matter.
func (t *Tracker) Tick(now time.Time) []slack.Alert {
	out := t.stale(now)
	for k, at := range t.failed {
		if now.Sub(at) > failedMemory {
			delete(t.failed, k)
		}
	}
	return append(out, t.reclaims.tick(now)...)
}

// Fills alerts once for each stream whose fill rises over the threshold; it is announced again
// only after it fell back under nine tenths of it, so a stream hovering there is not a flood.
func (t *Tracker) Fills(fills []bus.Fill) []slack.Alert {
	if t.th.Fill <= 0 {
		return nil
	}
	var out []slack.Alert
	for _, f := range fills {
		r := f.Ratio()
		switch {
		case !t.filling[f.Stream] && r >= t.th.Fill:
			t.filling[f.Stream] = true
			out = append(out, slack.StreamFilling{Stream: f.Stream, Bytes: int64(f.Bytes), MaxBytes: f.MaxBytes})
		case t.filling[f.Stream] && r < 0.9*t.th.Fill:
			delete(t.filling, f.Stream)
		}
	}
	return out
}

// failure alerts once per action: the arbiter retries an action several times before it gives
// up, and only the last try is a failure; a failure re-sent (a restart) is the same one.
func (t *Tracker) failure(e *events.ActionUpdated) []slack.Alert {
	if e.Status != events.ActionFailed {
		return nil
	}
	k := e.Workload + "/" + e.ActionID
	if _, ok := t.failed[k]; ok {
		return nil
	}
	t.failed[k] = e.At
	return []slack.Alert{slack.ActionFailed{ActionUpdated: e}}
}

func priceSource(e *events.PriceObserved) string {
	if e.Source == e.Provider || e.Provider == "" {
		return "prices from " + e.Source
	}
	return "prices from " + e.Source + " (" + e.Provider + ")"
}

// source is one price or telemetry source: when it last reported and whether it was announced
// stale.
type source struct {
	limit time.Duration
	last  time.Time
	stale bool
}

// heard records a report from a source; one from a stale source says it is back.
func (t *Tracker) heard(name string, limit time.Duration, at time.Time) []slack.Alert {
	if limit <= 0 {
		return nil
	}
	s, ok := t.sources[name]
	if !ok {
		t.sources[name] = &source{limit: limit, last: at}
		return nil
	}
	if !at.After(s.last) {
		return nil // an older report, read late: says nothing about now
	}
	var out []slack.Alert
	if s.stale {
		out = append(out, slack.SourceBack{Source: name, LastSeen: s.last, BackAt: at})
		s.stale = false
	}
	s.last = at
	return out
}

// stale announces each source that went silent for longer than its limit, once, and forgets
// sources silent for much longer (a location taken out of the fleet).
func (t *Tracker) stale(now time.Time) []slack.Alert {
	var out []slack.Alert
	for _, name := range sortedKeys(t.sources) {
		s := t.sources[name]
		silent := now.Sub(s.last)
		switch {
		case s.stale && silent > max(failedMemory, 4*s.limit):
			delete(t.sources, name)
		case !s.stale && silent > s.limit:
			s.stale = true
			out = append(out, slack.SourceStale{Source: name, LastSeen: s.last, Now: now,
				Detail: "no report for longer than " + s.limit.String()})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}
