package reclaim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/redact"
)

// AWS instance metadata paths under /latest/meta-data, from the AWS spot interruption docs.
const (
	imdsActionPath    = "spot/instance-action"
	imdsRebalancePath = "events/recommendations/rebalance"
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

// imdsAPI is the part of the SDK's IMDS client the watcher calls.
type imdsAPI interface {
	GetMetadata(ctx context.Context, in *imds.GetMetadataInput, opts ...func(*imds.Options)) (*imds.GetMetadataOutput, error)
	GetInstanceIdentityDocument(ctx context.Context, in *imds.GetInstanceIdentityDocumentInput,
		opts ...func(*imds.Options)) (*imds.GetInstanceIdentityDocumentOutput, error)
}

var _ imdsAPI = (*imds.Client)(nil)

// AWSIMDSWatcher polls the instance's own metadata service for a spot interruption notice and a
// rebalance recommendation. A 404 on either path means nothing is pending.
type AWSIMDSWatcher struct {
	cfg     AWSIMDSConfig
	d       Deps
	tracker *tracker
	client  imdsAPI

	mu    sync.Mutex
	place Placement
}

var _ Runner = (*AWSIMDSWatcher)(nil)

// NewAWSIMDSWatcher returns a watcher for cfg.
func NewAWSIMDSWatcher(cfg AWSIMDSConfig, d Deps) *AWSIMDSWatcher {
	d = d.withDefaults()
	cfg.Endpoint = strings.TrimSuffix(orDefault(cfg.Endpoint, "http://169.254.169.254"), "/")
	cfg.Interval = orDefault(cfg.Interval, 5*time.Second)
	cfg.Timeout = orDefault(cfg.Timeout, 2*time.Second)
	n := cfg.NodeConfig
	return &AWSIMDSWatcher{cfg: cfg, d: d, tracker: newTracker(d), client: newIMDSClient(cfg.Endpoint, d.HTTP),
		place: Placement{Provider: "aws", Region: n.Region, Zone: n.Zone, Location: n.Location, Instance: n.Instance, Node: n.Node}}
}

// newIMDSClient returns the SDK's client for endpoint, IMDSv2 only: a session token on every
// request, never the tokenless IMDSv1 fallback. A rejected token is renewed once, at once;
// every other failure is left to the poll loop, which backs off, so one poll stays within
// its timeout.
func newIMDSClient(endpoint string, c *http.Client) *imds.Client {
	return imds.New(imds.Options{
		Endpoint:          endpoint,
		HTTPClient:        metadataHTTP{c},
		ClientEnableState: imds.ClientEnabled, // configured on purpose: AWS_EC2_METADATA_DISABLED does not apply
		EnableFallback:    aws.FalseTernary,
		// The retryer's own backoff (none) holds, not the client's default of up to 1 s.
		DisableDefaultMaxBackoff: true,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 2
			o.Retryables = []retry.IsErrorRetryable{retry.RetryableError{}} // the SDK marks a 401 so
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			o.RateLimiter = ratelimit.None
		}),
	})
}

// metadataHTTP is the SDK's HTTP client. It caps what a metadata service may send (its
// documents are a few hundred bytes; the SDK reads a body whole), and redacts the endpoint in
// its errors where they start: the SDK wraps them in errors that do not unwrap, so the
// credentials of a configured endpoint could not be found in them later. A token answer
// without the TTL header (IMDS sends it; a metadata proxy may not) gets the TTL asked for,
// which the SDK would otherwise refuse the token for.
type metadataHTTP struct{ c *http.Client }

const imdsTTLHeader = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"

func (m metadataHTTP) Do(req *http.Request) (*http.Response, error) {
	resp, err := m.c.Do(req)
	if err != nil {
		return nil, redact.Error(err)
	}
	if req.Method == http.MethodPut && resp.Header.Get(imdsTTLHeader) == "" {
		resp.Header.Set(imdsTTLHeader, req.Header.Get(imdsTTLHeader))
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, maxBody), resp.Body}
	return resp, nil
}

// Run polls every interval until ctx is cancelled; the first successful poll also discovers
// the instance.
func (w *AWSIMDSWatcher) Run(ctx context.Context) error {
	w.d.Logger.Info("aws imds reclaim watcher started", "endpoint", redact.URL(w.cfg.Endpoint), "interval", w.cfg.Interval)
	return every(ctx, w.cfg.Interval, w.d, "aws_imds", w.Poll)
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
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	out, err := w.client.GetInstanceIdentityDocument(ctx, nil)
	if err != nil {
		return fmt.Errorf("discovering instance identity: %w", sdkError(err))
	}
	doc := out.InstanceIdentityDocument
	if doc.InstanceID == "" || doc.Region == "" {
		return fmt.Errorf("discovering instance identity: the identity document from %s names no instance or region",
			redact.URL(w.cfg.Endpoint))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.place.Instance = orDefault(w.place.Instance, doc.InstanceID)
	w.place.Region = orDefault(w.place.Region, doc.Region)
	w.place.Zone = orDefault(w.place.Zone, doc.AvailabilityZone)
	return nil
}

// get reads one metadata path; the SDK gets the IMDSv2 session token, reuses it until it
// expires and renews it when the service rejects it.
func (w *AWSIMDSWatcher) get(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	out, err := w.client.GetMetadata(ctx, &imds.GetMetadataInput{Path: path})
	if err != nil {
		return nil, fmt.Errorf("reading meta-data/%s: %w", path, sdkError(err))
	}
	defer out.Content.Close()
	b, err := io.ReadAll(out.Content)
	if err != nil {
		return nil, fmt.Errorf("reading meta-data/%s from %s: %w", path, redact.URL(w.cfg.Endpoint), redact.Error(err))
	}
	return b, nil
}

// sdkError turns an SDK failure into the watcher's: a 404 is errNotFound, another status an
// *errStatus naming the redacted URL, anything else the SDK's error with every URL in it
// redacted (net/http quotes the endpoint, credentials and all).
func sdkError(err error) error {
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil {
		return redact.Error(err)
	}
	if re.HTTPStatusCode() == http.StatusNotFound {
		return errNotFound
	}
	where := "the metadata service"
	if req := re.Response.Request; req != nil && req.URL != nil {
		where = redact.URL(req.URL.String())
	}
	return &errStatus{url: where, code: re.HTTPStatusCode()}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
