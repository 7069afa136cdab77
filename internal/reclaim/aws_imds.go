package reclaim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/redact"
)

// AWS instance metadata paths (IMDSv2), from the AWS spot interruption docs.
const (
	imdsTokenPath     = "/latest/api/token"
	imdsActionPath    = "/latest/meta-data/spot/instance-action"
	imdsRebalancePath = "/latest/meta-data/events/recommendations/rebalance"
	imdsIdentityPath  = "/latest/dynamic/instance-identity/document"
	imdsTokenTTL      = 6 * time.Hour
)

// awsSpotWarning is how long AWS's interruption warning runs: the earliest a rebalance
// recommendation can turn into lost capacity, and the deadline of an EventBridge warning.
const awsSpotWarning = 2 * time.Minute

// InstanceAction is IMDS's spot/instance-action document: the action is terminate, stop or
// hibernate, at Time.
type InstanceAction struct {
	Action string    `json:"action"`
	Time   time.Time `json:"time"`
}

// ParseInstanceAction decodes a spot/instance-action document.
func ParseInstanceAction(b []byte) (InstanceAction, error) {
	var a InstanceAction
	if err := json.Unmarshal(b, &a); err != nil {
		return InstanceAction{}, fmt.Errorf("decoding spot/instance-action: %w", err)
	}
	if a.Action == "" || a.Time.IsZero() {
		return InstanceAction{}, fmt.Errorf("decoding spot/instance-action: action and time are required, got %q", b)
	}
	return a, nil
}

// ParseRebalance decodes an events/recommendations/rebalance document into its notice time.
func ParseRebalance(b []byte) (time.Time, error) {
	var r struct {
		NoticeTime time.Time `json:"noticeTime"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return time.Time{}, fmt.Errorf("decoding rebalance recommendation: %w", err)
	}
	if r.NoticeTime.IsZero() {
		return time.Time{}, fmt.Errorf("decoding rebalance recommendation: noticeTime is required, got %q", b)
	}
	return r.NoticeTime, nil
}

// identityDocument is the part of the instance identity document the watcher uses.
type identityDocument struct {
	InstanceID       string `json:"instanceId"`
	Region           string `json:"region"`
	AvailabilityZone string `json:"availabilityZone"`
}

// AWSIMDSWatcher polls the instance's own metadata service for a spot interruption notice and a
// rebalance recommendation. A 404 on either path means nothing is pending.
type AWSIMDSWatcher struct {
	cfg     AWSIMDSConfig
	d       Deps
	tracker *tracker

	mu       sync.Mutex
	place    Placement
	token    string
	tokenEnd time.Time
}

var _ Runner = (*AWSIMDSWatcher)(nil)

// NewAWSIMDSWatcher returns a watcher for cfg.
func NewAWSIMDSWatcher(cfg AWSIMDSConfig, d Deps) *AWSIMDSWatcher {
	d = d.withDefaults()
	cfg.Endpoint = strings.TrimSuffix(orDefault(cfg.Endpoint, "http://169.254.169.254"), "/")
	cfg.Interval = orDefault(cfg.Interval, 5*time.Second)
	cfg.Timeout = orDefault(cfg.Timeout, 2*time.Second)
	n := cfg.NodeConfig
	return &AWSIMDSWatcher{cfg: cfg, d: d, tracker: newTracker(d), place: Placement{Provider: "aws",
		Region: n.Region, Zone: n.Zone, Location: n.Location, Instance: n.Instance, Node: n.Node}}
}

// Run polls every interval until ctx is cancelled; the first successful poll also discovers
// the instance.
func (w *AWSIMDSWatcher) Run(ctx context.Context) error {
	w.d.Logger.Info("aws imds reclaim watcher started", "endpoint", redact.URL(w.cfg.Endpoint), "interval", w.cfg.Interval)
	return every(ctx, w.cfg.Interval, w.d.Logger, "aws_imds", w.Poll)
}

// Poll checks both metadata paths once and publishes any new notice.
func (w *AWSIMDSWatcher) Poll(ctx context.Context) error {
	if err := w.discover(ctx); err != nil {
		return err
	}
	errAction := w.pollAction(ctx)
	var errRebalance error
	if !w.cfg.SkipRebalance {
		errRebalance = w.pollRebalance(ctx)
	}
	return errors.Join(errAction, errRebalance)
}

func (w *AWSIMDSWatcher) pollAction(ctx context.Context) error {
	b, err := w.get(ctx, imdsActionPath)
	if errors.Is(err, errNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	a, err := ParseInstanceAction(b)
	if err != nil {
		return err
	}
	place := w.placement()
	_, _, err = w.tracker.report(ctx, notice{
		key:  "instance-action|" + place.Instance + "|" + a.Action + "|" + stamp(a.Time),
		kind: events.ReclaimInterruption, deadline: a.Time, where: place, source: "aws-imds"})
	return err
}

func (w *AWSIMDSWatcher) pollRebalance(ctx context.Context) error {
	b, err := w.get(ctx, imdsRebalancePath)
	if errors.Is(err, errNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	at, err := ParseRebalance(b)
	if err != nil {
		return err
	}
	place := w.placement()
	_, _, err = w.tracker.report(ctx, notice{key: "rebalance|" + place.Instance + "|" + stamp(at),
		kind: events.ReclaimRebalance, noticeAt: at, lead: awsSpotWarning, where: place, source: "aws-imds"})
	return err
}

func (w *AWSIMDSWatcher) placement() Placement {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.place
}

// discover fills instance, region and zone from the identity document when config left them
// empty; it runs until it succeeds once.
func (w *AWSIMDSWatcher) discover(ctx context.Context) error {
	p := w.placement()
	if p.Instance != "" && p.Region != "" && p.Zone != "" {
		return nil
	}
	b, err := w.get(ctx, imdsIdentityPath)
	if err != nil {
		return fmt.Errorf("discovering instance identity: %w", err)
	}
	var doc identityDocument
	if err := json.Unmarshal(b, &doc); err != nil || doc.InstanceID == "" || doc.Region == "" {
		return fmt.Errorf("discovering instance identity: malformed identity document %.200q", b)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.place.Instance = orDefault(w.place.Instance, doc.InstanceID)
	w.place.Region = orDefault(w.place.Region, doc.Region)
	w.place.Zone = orDefault(w.place.Zone, doc.AvailabilityZone)
	return nil
}

// get reads one metadata path with an IMDSv2 session token, renewing the token once when the
// service rejects it.
func (w *AWSIMDSWatcher) get(ctx context.Context, path string) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		tok, err := w.sessionToken(ctx)
		if err != nil {
			return nil, err
		}
		r, err := fetch(ctx, w.d.HTTP, request{method: http.MethodGet, url: w.cfg.Endpoint + path,
			header: http.Header{"X-Aws-Ec2-Metadata-Token": {tok}}, timeout: w.cfg.Timeout})
		var st *errStatus
		if errors.As(err, &st) && st.code == http.StatusUnauthorized && attempt == 0 {
			w.dropToken()
			continue
		}
		return r.body, err
	}
}

func (w *AWSIMDSWatcher) sessionToken(ctx context.Context) (string, error) {
	w.mu.Lock()
	tok, end := w.token, w.tokenEnd
	w.mu.Unlock()
	now := w.d.Now()
	if tok != "" && now.Before(end) {
		return tok, nil
	}
	ttl := strconv.Itoa(int(imdsTokenTTL / time.Second))
	r, err := fetch(ctx, w.d.HTTP, request{method: http.MethodPut, url: w.cfg.Endpoint + imdsTokenPath,
		header: http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {ttl}}, timeout: w.cfg.Timeout})
	if err != nil {
		return "", fmt.Errorf("getting an IMDSv2 session token: %w", err)
	}
	tok = strings.TrimSpace(string(r.body))
	if tok == "" {
		return "", fmt.Errorf("getting an IMDSv2 session token: empty token from %s", redact.URL(w.cfg.Endpoint))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.token, w.tokenEnd = tok, now.Add(imdsTokenTTL-time.Minute)
	return tok, nil
}

func (w *AWSIMDSWatcher) dropToken() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.token = ""
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
