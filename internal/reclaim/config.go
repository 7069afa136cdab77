package reclaim

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/bursar-dev/bursar/internal/redact"
)

// Config declares which reclaim watchers run on this collector. It sits under `watchers:` in
// collector.yaml; a nil entry means that watcher is off.
type Config struct {
	AWS       *AWSIMDSConfig        `yaml:"aws_imds,omitempty"`
	AWSEvents *AWSEventBridgeConfig `yaml:"aws_eventbridge,omitempty"`
	GCP       *GCPMetadataConfig    `yaml:"gcp_metadata,omitempty"`
	Azure     *AzureEventsConfig    `yaml:"azure_scheduled_events,omitempty"`
}

// NodeConfig places an on-instance watcher. Location is Bursar's name for the provider region
// (it must match the placement snapshot); the others are discovered from the metadata service
// when left empty, except Node (the Kubernetes node name), which is optional.
type NodeConfig struct {
	Location string `yaml:"location"`
	Region   string `yaml:"region,omitempty"`
	Zone     string `yaml:"zone,omitempty"`
	Instance string `yaml:"instance,omitempty"`
	Node     string `yaml:"node,omitempty"`
}

// AWSIMDSConfig runs the on-instance AWS watcher (IMDSv2 spot/instance-action and rebalance).
type AWSIMDSConfig struct {
	NodeConfig    `yaml:",inline"`
	Endpoint      string        `yaml:"endpoint,omitempty"` // default http://169.254.169.254
	Interval      time.Duration `yaml:"interval,omitempty"` // default 5s, as AWS recommends
	Timeout       time.Duration `yaml:"timeout,omitempty"`  // per request, default 2s
	SkipRebalance bool          `yaml:"skip_rebalance,omitempty"`
}

// AWSEventBridgeConfig runs the cluster-wide AWS watcher: EventBridge spot interruption and
// rebalance events routed to an SQS queue. Credentials come from the AWS default chain.
type AWSEventBridgeConfig struct {
	QueueURL string `yaml:"queue_url"`
	Region   string `yaml:"region"`
	Endpoint string `yaml:"endpoint,omitempty"` // an SQS endpoint override (tests, VPC endpoints)
	// Location is the Bursar location of events from regions not in Locations.
	Location  string            `yaml:"location,omitempty"`
	Locations map[string]string `yaml:"locations,omitempty"` // AWS region -> Bursar location
	WaitTime  time.Duration     `yaml:"wait_time,omitempty"` // SQS long poll, default 20s
}

// GCPMetadataConfig runs the on-instance GCP watcher (instance/preempted and
// instance/maintenance-event, long-polled).
type GCPMetadataConfig struct {
	NodeConfig `yaml:",inline"`
	Endpoint   string        `yaml:"endpoint,omitempty"`    // default http://metadata.google.internal/computeMetadata/v1
	WaitTime   time.Duration `yaml:"wait_time,omitempty"`   // wait_for_change timeout, default 60s
	RetryDelay time.Duration `yaml:"retry_delay,omitempty"` // after a failed request, default 1s
}

// AzureEventsConfig runs the on-instance Azure Scheduled Events watcher (Preempt, Terminate).
// Instance is the VM name as Scheduled Events lists it in Resources.
type AzureEventsConfig struct {
	NodeConfig `yaml:",inline"`
	Endpoint   string        `yaml:"endpoint,omitempty"` // default http://169.254.169.254
	Interval   time.Duration `yaml:"interval,omitempty"` // default 5s (Preempt gives 30s)
	Timeout    time.Duration `yaml:"timeout,omitempty"`  // per request, default 5s
}

// FieldError is a bad config value; Field is its path under `watchers:` (for example
// "aws_imds.interval"), so the caller can point at the file and line.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %s", e.Field, e.Problem) }

// Validate checks every configured watcher and returns the first bad field.
func (c Config) Validate() error {
	checks := []func() error{}
	if c.AWS != nil {
		checks = append(checks, func() error { return c.AWS.validate("aws_imds") })
	}
	if c.AWSEvents != nil {
		checks = append(checks, func() error { return c.AWSEvents.validate("aws_eventbridge") })
	}
	if c.GCP != nil {
		checks = append(checks, func() error { return c.GCP.validate("gcp_metadata") })
	}
	if c.Azure != nil {
		checks = append(checks, func() error { return c.Azure.validate("azure_scheduled_events") })
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *AWSIMDSConfig) validate(at string) error {
	return firstErr(c.NodeConfig.validate(at), checkURL(at+".endpoint", c.Endpoint),
		checkDuration(at+".interval", c.Interval), checkDuration(at+".timeout", c.Timeout))
}

func (c *AWSEventBridgeConfig) validate(at string) error {
	if c.QueueURL == "" {
		return &FieldError{at + ".queue_url", "must name the SQS queue the EventBridge rule targets"}
	}
	if c.Region == "" {
		return &FieldError{at + ".region", "must name the queue's AWS region, e.g. us-east-1"}
	}
	if c.Location == "" && len(c.Locations) == 0 {
		return &FieldError{at + ".location", "set location or locations (region -> Bursar location)"}
	}
	return firstErr(checkURL(at+".queue_url", c.QueueURL), checkURL(at+".endpoint", c.Endpoint),
		checkDuration(at+".wait_time", c.WaitTime))
}

func (c *GCPMetadataConfig) validate(at string) error {
	return firstErr(c.NodeConfig.validate(at), checkURL(at+".endpoint", c.Endpoint),
		checkDuration(at+".wait_time", c.WaitTime), checkDuration(at+".retry_delay", c.RetryDelay))
}

func (c *AzureEventsConfig) validate(at string) error {
	return firstErr(c.NodeConfig.validate(at), checkURL(at+".endpoint", c.Endpoint),
		checkDuration(at+".interval", c.Interval), checkDuration(at+".timeout", c.Timeout))
}

func (c NodeConfig) validate(at string) error {
	if c.Location == "" {
		return &FieldError{at + ".location", "must name the Bursar location of this node, e.g. aws-use1"}
	}
	return nil
}

func checkURL(field, s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &FieldError{field, fmt.Sprintf("must be an http(s) URL, got %q", redact.URL(s))}
	}
	return nil
}

func checkDuration(field string, d time.Duration) error {
	if d < 0 {
		return &FieldError{field, fmt.Sprintf("must not be negative, got %s", d)}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Watchers are the watchers a Config turns on, by name so a caller can reach one (for example
// AzureWatcher.AckReclaim, which nothing calls by default: see AzureWatcher).
type Watchers struct {
	AWS       *AWSIMDSWatcher
	AWSEvents *EventBridgeWatcher
	GCP       *GCPWatcher
	Azure     *AzureWatcher
}

// New builds the watchers cfg names. It does no network I/O except loading AWS credentials
// configuration for the EventBridge watcher; discovery happens when a watcher runs.
func New(ctx context.Context, cfg Config, d Deps) (*Watchers, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("reclaim watchers config: %w", err)
	}
	if d.Publisher == nil {
		return nil, fmt.Errorf("reclaim watchers: no publisher given")
	}
	d = d.withDefaults()
	w := &Watchers{}
	if cfg.AWS != nil {
		w.AWS = NewAWSIMDSWatcher(*cfg.AWS, d)
	}
	if cfg.AWSEvents != nil {
		q, err := NewSQSClient(ctx, *cfg.AWSEvents)
		if err != nil {
			return nil, err
		}
		w.AWSEvents = NewEventBridgeWatcher(*cfg.AWSEvents, q, d)
	}
	if cfg.GCP != nil {
		w.GCP = NewGCPWatcher(*cfg.GCP, d)
	}
	if cfg.Azure != nil {
		w.Azure = NewAzureWatcher(*cfg.Azure, d)
	}
	return w, nil
}

// Runners lists the configured watchers, for an oklog/run group.
func (w *Watchers) Runners() []Runner {
	var rs []Runner
	if w.AWS != nil {
		rs = append(rs, w.AWS)
	}
	if w.AWSEvents != nil {
		rs = append(rs, w.AWSEvents)
	}
	if w.GCP != nil {
		rs = append(rs, w.GCP)
	}
	if w.Azure != nil {
		rs = append(rs, w.Azure)
	}
	return rs
}
