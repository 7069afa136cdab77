package reclaim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/redact"
)

const (
	azureEventsPath  = "/metadata/scheduledevents?api-version=2020-07-01"
	azureComputePath = "/metadata/instance/compute/%s?api-version=2021-02-01&format=text"
)

// azureKinds maps the Scheduled Events types that end the VM to reclaim kinds. Freeze, Reboot
// and Redeploy keep the VM (and its disks) and are not reclaims.
var azureKinds = map[string]events.ReclaimKind{
	"Preempt":   events.ReclaimPreempted,
	"Terminate": events.ReclaimInterruption,
}

// ScheduledEvents is the Azure Scheduled Events document.
type ScheduledEvents struct {
	DocumentIncarnation int              `json:"DocumentIncarnation"`
	Events              []ScheduledEvent `json:"Events"`
}

// ScheduledEvent is one event; NotBefore is when it may start (empty once Started).
type ScheduledEvent struct {
	EventID      string   `json:"EventId"`
	EventStatus  string   `json:"EventStatus"`
	EventType    string   `json:"EventType"`
	ResourceType string   `json:"ResourceType"`
	Resources    []string `json:"Resources"`
	NotBefore    string   `json:"NotBefore"`
	EventSource  string   `json:"EventSource"`
}

// ParseScheduledEvents decodes a Scheduled Events document and checks every event's NotBefore.
func ParseScheduledEvents(b []byte) (ScheduledEvents, error) {
	var doc ScheduledEvents
	if err := json.Unmarshal(b, &doc); err != nil {
		return ScheduledEvents{}, fmt.Errorf("decoding scheduled events: %w", err)
	}
	for i, e := range doc.Events {
		if e.EventID == "" {
			return ScheduledEvents{}, fmt.Errorf("decoding scheduled events: Events[%d].EventId is empty", i)
		}
		if _, err := ParseNotBefore(e.NotBefore); err != nil {
			return ScheduledEvents{}, fmt.Errorf("decoding scheduled events: Events[%d]: %w", i, err)
		}
	}
	return doc, nil
}

// ParseNotBefore reads NotBefore, which Azure writes in RFC 1123 ("Tue, 09 Aug 2022 17:07:32
// GMT"); RFC 3339 is accepted too, and an empty value is the zero time (the event has started).
func ParseNotBefore(s string) (time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("NotBefore %.60q is neither RFC 1123 nor RFC 3339", s)
}

// AzureWatcher polls Azure Scheduled Events for a Preempt or Terminate of this VM.
//
// It never acknowledges an event by itself. Azure lets a VM acknowledge (POST StartRequests) to
// start an event before NotBefore; for a Preempt that gives up the only notice there is (30 s),
// which is the time Bursar needs to launch a replacement and drain the replica. Polling,
// publishing and restarting therefore never send StartRequests; only an explicit Ack or
// AckReclaim does, for a caller that knows the work has already moved. No config turns
// acknowledging on: the collector cannot know when the arbiter has finished a replacement.
type AzureWatcher struct {
	cfg     AzureEventsConfig
	d       Deps
	tracker *tracker

	mu      sync.Mutex
	place   Placement
	found   bool              // discovery done
	azureID map[string]string // capacity.reclaimed event id -> Azure EventId
}

var _ Runner = (*AzureWatcher)(nil)

// NewAzureWatcher returns a watcher for cfg.
func NewAzureWatcher(cfg AzureEventsConfig, d Deps) *AzureWatcher {
	d = d.withDefaults()
	cfg.Endpoint = strings.TrimSuffix(orDefault(cfg.Endpoint, "http://169.254.169.254"), "/")
	cfg.Interval = orDefault(cfg.Interval, 5*time.Second)
	cfg.Timeout = orDefault(cfg.Timeout, 5*time.Second)
	n := cfg.NodeConfig
	return &AzureWatcher{cfg: cfg, d: d, tracker: newTracker(d), azureID: map[string]string{},
		place: Placement{Provider: "azure", Region: n.Region, Zone: n.Zone, Location: n.Location,
			Instance: n.Instance, Node: n.Node}}
}

// Run polls every interval until ctx is cancelled.
func (w *AzureWatcher) Run(ctx context.Context) error {
	w.d.Logger.Info("azure scheduled events reclaim watcher started", "endpoint", redact.URL(w.cfg.Endpoint))
	return every(ctx, w.cfg.Interval, w.d, "azure_scheduled_events", w.Poll)
}

// Poll reads the Scheduled Events document once and publishes any new Preempt or Terminate of
// this VM.
func (w *AzureWatcher) Poll(ctx context.Context) error {
	if err := w.discover(ctx); err != nil {
		return err
	}
	r, err := w.call(ctx, http.MethodGet, azureEventsPath, nil)
	if err != nil {
		return err
	}
	doc, err := ParseScheduledEvents(r.body)
	if err != nil {
		return err
	}
	place := w.placement()
	for _, e := range doc.Events {
		kind, ok := azureKinds[e.EventType]
		if !ok || !slices.Contains(e.Resources, place.Instance) {
			continue
		}
		notBefore, _ := ParseNotBefore(e.NotBefore) // checked by ParseScheduledEvents
		ev, _, err := w.tracker.report(ctx, notice{key: e.EventID, kind: kind, deadline: notBefore,
			where: place, source: "azure-scheduled-events"})
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.azureID[ev.ID] = e.EventID
		w.mu.Unlock()
	}
	return nil
}

// AckReclaim acknowledges the Azure event behind a capacity.reclaimed event this watcher
// published, identified by that event's id.
func (w *AzureWatcher) AckReclaim(ctx context.Context, reclaimID string) error {
	w.mu.Lock()
	id, ok := w.azureID[reclaimID]
	w.mu.Unlock()
	if !ok {
		return fmt.Errorf("acknowledging reclaim %s: no azure scheduled event behind it on this node", reclaimID)
	}
	return w.Ack(ctx, id)
}

// Ack tells Azure to start the scheduled event now (StartRequests), ending the notice period:
// call it only once the VM's work is elsewhere. The watcher itself never calls it.
func (w *AzureWatcher) Ack(ctx context.Context, azureEventID string) error {
	body, err := json.Marshal(map[string][]map[string]string{
		"StartRequests": {{"EventId": azureEventID}}})
	if err != nil {
		return fmt.Errorf("encoding StartRequests: %w", err)
	}
	if _, err := w.call(ctx, http.MethodPost, azureEventsPath, body); err != nil {
		return fmt.Errorf("acknowledging azure scheduled event %s: %w", azureEventID, err)
	}
	w.d.Logger.Info("azure scheduled event acknowledged", "event", azureEventID)
	return nil
}

func (w *AzureWatcher) placement() Placement {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.place
}

// discover fills the VM name, region and zone from the instance metadata when config left them
// empty. The name matters: Scheduled Events lists the VMs an event touches by name.
func (w *AzureWatcher) discover(ctx context.Context) error {
	w.mu.Lock()
	p, found := w.place, w.found
	w.mu.Unlock()
	if found {
		return nil
	}
	for _, f := range []struct {
		field *string
		name  string
	}{{&p.Instance, "name"}, {&p.Region, "location"}, {&p.Zone, "zone"}} {
		if *f.field != "" {
			continue
		}
		r, err := w.call(ctx, http.MethodGet, fmt.Sprintf(azureComputePath, f.name), nil)
		if err != nil {
			return fmt.Errorf("discovering vm %s: %w", f.name, err)
		}
		*f.field = strings.TrimSpace(string(r.body))
	}
	if p.Instance == "" || p.Region == "" {
		return fmt.Errorf("discovering vm: empty name or location from %s", redact.URL(w.cfg.Endpoint))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.place, w.found = p, true
	return nil
}

func (w *AzureWatcher) call(ctx context.Context, method, path string, body []byte) (response, error) {
	h := http.Header{"Metadata": {"true"}}
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	return fetch(ctx, w.d.HTTP, request{method: method, url: w.cfg.Endpoint + path, header: h,
		body: body, timeout: w.cfg.Timeout})
}
