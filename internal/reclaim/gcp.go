package reclaim

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/redact"
)

// gcpItem is one metadata value the GCP watcher long-polls.
type gcpItem struct {
	path   string
	kind   events.ReclaimKind
	lead   time.Duration   // notice to power-off, from GCP's docs
	active map[string]bool // value -> is a reclaim; values not listed are malformed
}

// The two values that announce lost capacity. Spot VMs get 30 s between the preemption notice
// and power-off; a GPU VM cannot live-migrate, so TERMINATE_ON_HOST_MAINTENANCE ends it about
// 60 s after the value flips. Live migration keeps the VM and is not a reclaim.
var (
	gcpPreempted = gcpItem{path: "instance/preempted", kind: events.ReclaimPreempted,
		lead: 30 * time.Second, active: map[string]bool{"TRUE": true, "FALSE": false}}
	gcpMaintenance = gcpItem{path: "instance/maintenance-event", kind: events.ReclaimMaintenance,
		lead: 60 * time.Second, active: map[string]bool{"TERMINATE_ON_HOST_MAINTENANCE": true,
			"NONE": false, "MIGRATE_ON_HOST_MAINTENANCE": false}}
)

// ParseGCPValue reads a metadata value of item and says whether it announces a reclaim.
func ParseGCPValue(path string, b []byte) (bool, error) {
	item, ok := map[string]gcpItem{gcpPreempted.path: gcpPreempted, gcpMaintenance.path: gcpMaintenance}[path]
	if !ok {
		return false, fmt.Errorf("no reclaim signal at metadata path %q", path)
	}
	v := strings.TrimSpace(string(b))
	active, known := item.active[v]
	if !known {
		return false, fmt.Errorf("unexpected value %.80q at metadata %s", v, path)
	}
	return active, nil
}

// GCPWatcher long-polls the instance's metadata server for a preemption or a terminating host
// maintenance event, with wait_for_change so that a notice arrives within a second.
type GCPWatcher struct {
	cfg     GCPMetadataConfig
	d       Deps
	tracker *tracker

	mu    sync.Mutex
	place Placement
}

var _ Runner = (*GCPWatcher)(nil)

// NewGCPWatcher returns a watcher for cfg.
func NewGCPWatcher(cfg GCPMetadataConfig, d Deps) *GCPWatcher {
	d = d.withDefaults()
	cfg.Endpoint = strings.TrimSuffix(orDefault(cfg.Endpoint, "http://metadata.google.internal/computeMetadata/v1"), "/")
	cfg.WaitTime = orDefault(cfg.WaitTime, 60*time.Second)
	cfg.RetryDelay = orDefault(cfg.RetryDelay, time.Second)
	n := cfg.NodeConfig
	return &GCPWatcher{cfg: cfg, d: d, tracker: newTracker(d), place: Placement{Provider: "gcp",
		Region: n.Region, Zone: n.Zone, Location: n.Location, Instance: n.Instance, Node: n.Node}}
}

// Run watches both values side by side until ctx is cancelled.
func (w *GCPWatcher) Run(ctx context.Context) error {
	w.d.Logger.Info("gcp metadata reclaim watcher started", "endpoint", redact.URL(w.cfg.Endpoint))
	var wg sync.WaitGroup
	for _, item := range []gcpItem{gcpPreempted, gcpMaintenance} {
		wg.Go(func() { w.watch(ctx, item) })
	}
	wg.Wait()
	return nil
}

func (w *GCPWatcher) watch(ctx context.Context, item gcpItem) {
	etag := ""
	h := newHealth(w.d, "gcp_metadata "+item.path)
	for ctx.Err() == nil {
		next, err := w.Observe(ctx, item.path, etag)
		if err != nil {
			if ctx.Err() == nil {
				_ = backoff.Sleep(ctx, max(w.cfg.RetryDelay, h.failed(err)))
			}
			continue
		}
		h.ok()
		etag = next
	}
}

// Observe reads one value (waiting for it to change from etag when etag is set), publishes a
// notice when it announces a reclaim, and returns the value's new ETag.
func (w *GCPWatcher) Observe(ctx context.Context, path, etag string) (string, error) {
	if err := w.discover(ctx); err != nil {
		return etag, err
	}
	item := gcpPreempted
	if path == gcpMaintenance.path {
		item = gcpMaintenance
	}
	q := url.Values{}
	if etag != "" {
		q.Set("wait_for_change", "true")
		q.Set("timeout_sec", strconv.Itoa(int(w.cfg.WaitTime/time.Second)))
		q.Set("last_etag", etag)
	}
	r, err := w.get(ctx, item.path, q, w.cfg.WaitTime+10*time.Second)
	if err != nil {
		return etag, err
	}
	active, err := ParseGCPValue(item.path, r.body)
	if err != nil {
		return etag, err
	}
	place := w.placement()
	key := string(item.kind) + "|" + place.Instance
	if !active {
		w.tracker.forget(key) // the episode is over; a later flip is a new notice
		return r.header.Get("ETag"), nil
	}
	_, _, err = w.tracker.report(ctx, notice{key: key, kind: item.kind, lead: item.lead,
		where: place, source: "gcp-metadata"})
	if err != nil {
		return etag, err // the same etag: ask again at once and retry the publish
	}
	return r.header.Get("ETag"), nil
}

func (w *GCPWatcher) placement() Placement {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.place
}

// discover fills instance id, zone and region from the metadata server when config left them
// empty.
func (w *GCPWatcher) discover(ctx context.Context) error {
	p := w.placement()
	if p.Instance == "" {
		r, err := w.get(ctx, "instance/id", nil, 5*time.Second)
		if err != nil {
			return fmt.Errorf("discovering instance id: %w", err)
		}
		p.Instance = strings.TrimSpace(string(r.body))
	}
	if p.Zone == "" || p.Region == "" {
		r, err := w.get(ctx, "instance/zone", nil, 5*time.Second)
		if err != nil {
			return fmt.Errorf("discovering instance zone: %w", err)
		}
		zone, region := gcpZone(string(r.body))
		p.Zone, p.Region = orDefault(p.Zone, zone), orDefault(p.Region, region)
	}
	if p.Instance == "" || p.Region == "" {
		return fmt.Errorf("discovering instance: empty id or zone from %s", redact.URL(w.cfg.Endpoint))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.place = p
	return nil
}

// gcpZone turns "projects/123/zones/us-central1-a" into zone us-central1-a, region us-central1.
func gcpZone(s string) (zone, region string) {
	s = strings.TrimSpace(s)
	zone = s[strings.LastIndex(s, "/")+1:]
	if i := strings.LastIndex(zone, "-"); i > 0 {
		region = zone[:i]
	}
	return zone, region
}

// get reads one metadata path. The server must answer as the GCP metadata server does, with
// Metadata-Flavor: Google, so that a stray proxy is never taken for it.
func (w *GCPWatcher) get(ctx context.Context, path string, q url.Values, timeout time.Duration) (response, error) {
	u := w.cfg.Endpoint + "/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	r, err := fetch(ctx, w.d.HTTP, request{method: http.MethodGet, url: u,
		header: http.Header{"Metadata-Flavor": {"Google"}}, timeout: timeout})
	if err != nil {
		return r, err
	}
	if r.header.Get("Metadata-Flavor") != "Google" {
		return response{}, fmt.Errorf("%s did not answer as a GCP metadata server (no Metadata-Flavor: Google)", redact.URL(u))
	}
	return r, nil
}
