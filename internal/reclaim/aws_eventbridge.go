package reclaim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/redact"
)

// EventBridge detail-types the watcher turns into notices.
const (
	detailSpotInterruption = "EC2 Spot Instance Interruption Warning"
	detailRebalance        = "EC2 Instance Rebalance Recommendation"
)

// EventBridgeEvent is the envelope of an EventBridge event, as delivered in an SQS message body.
type EventBridgeEvent struct {
	ID         string    `json:"id"`
	DetailType string    `json:"detail-type"`
	Source     string    `json:"source"`
	Time       time.Time `json:"time"`
	Region     string    `json:"region"`
	Detail     struct {
		InstanceID     string `json:"instance-id"`
		InstanceAction string `json:"instance-action"`
	} `json:"detail"`
}

// errIgnored marks an event that parsed but is not a reclaim signal.
var errIgnored = errors.New("not a spot interruption or rebalance event")

// ParseEventBridge decodes an EventBridge event and checks it is a reclaim signal. The instance
// comes from detail.instance-id, never from the resource ARN, whose format varies.
func ParseEventBridge(b []byte) (EventBridgeEvent, error) {
	var e EventBridgeEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return EventBridgeEvent{}, fmt.Errorf("decoding eventbridge event: %w", err)
	}
	if e.DetailType != detailSpotInterruption && e.DetailType != detailRebalance {
		return e, fmt.Errorf("eventbridge event %q of type %q: %w", e.ID, e.DetailType, errIgnored)
	}
	if e.Detail.InstanceID == "" || e.Region == "" || e.Time.IsZero() {
		return e, fmt.Errorf("eventbridge event %q: detail.instance-id, region and time are required", e.ID)
	}
	return e, nil
}

// SQSAPI is the part of the SQS client the watcher calls.
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

var _ SQSAPI = (*sqs.Client)(nil)

// NewSQSClient builds an SQS client from the AWS default credential chain for cfg's region,
// pointed at cfg.Endpoint when one is set.
func NewSQSClient(ctx context.Context, cfg AWSEventBridgeConfig) (*sqs.Client, error) {
	ac, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(cfg.Region))
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration for the eventbridge watcher: %w", err)
	}
	return NewSQSClientFrom(ac, cfg.Endpoint), nil
}

// NewSQSClientFrom builds an SQS client from an AWS config and an optional endpoint override.
func NewSQSClientFrom(ac aws.Config, endpoint string) *sqs.Client {
	return sqs.NewFromConfig(ac, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// EventBridgeWatcher long-polls an SQS queue that an EventBridge rule feeds with EC2 spot
// interruption warnings and rebalance recommendations, for a whole account and region, with no
// agent on the nodes. A message is deleted only after its notice is published.
type EventBridgeWatcher struct {
	cfg     AWSEventBridgeConfig
	q       SQSAPI
	d       Deps
	tracker *tracker
}

var _ Runner = (*EventBridgeWatcher)(nil)

// NewEventBridgeWatcher returns a watcher reading cfg.QueueURL through q.
func NewEventBridgeWatcher(cfg AWSEventBridgeConfig, q SQSAPI, d Deps) *EventBridgeWatcher {
	d = d.withDefaults()
	cfg.WaitTime = orDefault(cfg.WaitTime, 20*time.Second)
	return &EventBridgeWatcher{cfg: cfg, q: q, d: d, tracker: newTracker(d)}
}

// Run receives messages until ctx is cancelled, backing off after failed receives.
func (w *EventBridgeWatcher) Run(ctx context.Context) error {
	w.d.Logger.Info("aws eventbridge reclaim watcher started", "queue", redact.URL(w.cfg.QueueURL))
	h := newHealth(w.d, "aws_eventbridge")
	for ctx.Err() == nil {
		if err := w.Poll(ctx); err != nil && ctx.Err() == nil {
			_ = backoff.Sleep(ctx, h.failed(err))
		} else if err == nil {
			h.ok()
		}
	}
	return nil
}

// Poll receives one batch (long-polling up to the wait time) and handles each message.
func (w *EventBridgeWatcher) Poll(ctx context.Context) error {
	out, err := w.q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:            aws.String(w.cfg.QueueURL),
		MaxNumberOfMessages: 10,
		WaitTimeSeconds:     int32(w.cfg.WaitTime / time.Second),
	})
	if err != nil {
		return fmt.Errorf("receiving from %s: %w", redact.URL(w.cfg.QueueURL), redact.Error(err))
	}
	var errs []error
	for _, m := range out.Messages {
		errs = append(errs, w.handle(ctx, aws.ToString(m.MessageId), aws.ToString(m.Body), m.ReceiptHandle))
	}
	return errors.Join(errs...)
}

// handle publishes one message's notice and deletes the message. A message that is not a reclaim
// event is deleted too (logged), so it does not come back forever; a failed publish leaves the
// message on the queue to be redelivered.
func (w *EventBridgeWatcher) handle(ctx context.Context, id, body string, receipt *string) error {
	e, err := ParseEventBridge([]byte(body))
	switch {
	case errors.Is(err, errIgnored):
		w.d.Logger.Debug("eventbridge message ignored", "message", id, "reason", err)
	case err != nil:
		w.d.Logger.Warn("eventbridge message dropped: malformed", "message", id, "err", err)
	default:
		if _, _, err := w.tracker.report(ctx, w.notice(e)); err != nil {
			return err
		}
	}
	_, err = w.q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.cfg.QueueURL),
		ReceiptHandle: receipt})
	if err != nil {
		return fmt.Errorf("deleting message %s from %s: %w", id, redact.URL(w.cfg.QueueURL), redact.Error(err))
	}
	return nil
}

func (w *EventBridgeWatcher) notice(e EventBridgeEvent) notice {
	kind := events.ReclaimInterruption
	if e.DetailType == detailRebalance {
		kind = events.ReclaimRebalance
	}
	location := w.cfg.Locations[e.Region]
	if location == "" {
		location = w.cfg.Location
	}
	place := Placement{Provider: "aws", Region: e.Region, Location: location,
		Instance: e.Detail.InstanceID}
	return notice{key: strings.Join([]string{string(kind), e.Detail.InstanceID, stamp(e.Time)}, "|"),
		kind: kind, noticeAt: e.Time, lead: awsSpotWarning, where: place, source: "aws-eventbridge"}
}
