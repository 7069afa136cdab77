// Package bus is Bursar's JetStream wiring, in one place: the streams, KV buckets and consumers
// every part agrees on, a publisher that deduplicates by event id, a consumer that acks only after
// its handler succeeded, and the embedded NATS server used by the default run and by tests.
package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	Market    = "MARKET"
	Telemetry = "TELEMETRY"
	Fleet     = "FLEET"
	DLQ       = "DLQ"
)

// DLQ headers: where a dead message came from and why it died.
const (
	HeaderOriginalSubject = "Bursar-Original-Subject"
	HeaderReason          = "Bursar-Reason"
	HeaderStream          = "Bursar-Original-Stream"
	dlqPrefix             = "bursar.dlq."
)

// Options size the streams for a deployment. The zero value is a single node with defaults.
type Options struct {
	Replicas         int           // 1 on a single node; 3 on a production cluster
	TelemetryMaxAge  time.Duration // how long raw GPU and token samples stay in NATS (default 24h)
	FleetMaxAge      time.Duration // the audit log (default 400 days)
	DuplicateWindow  time.Duration // how long a re-published event id is dropped (default 10m)
	BudgetHistory    uint8         // revisions kept per budget policy (default 64, the most NATS allows)
	LeaseTTL         time.Duration // leader lease lifetime (default 10s)
	MarketMaxAge     time.Duration // prices and reclaims (default 30 days)
	DLQMaxAge        time.Duration // dead messages (default 30 days)
	MaxPayloadPerMsg int32         // largest event accepted (default 1 MiB)
	// Bytes each stream may hold on disk (per replica). A leaked publisher's key can fill a
	// stream as fast as the disk takes it; at its limit an event stream drops its oldest
	// messages and a bucket refuses writes, and before that the fill alert fires (Fills).
	MarketMaxBytes    int64 // default 2 GiB
	TelemetryMaxBytes int64 // default 2 GiB
	FleetMaxBytes     int64 // default 4 GiB
	DLQMaxBytes       int64 // default 1 GiB
	BucketMaxBytes    int64 // each KV bucket (default 256 MiB)
	// BucketMaxValue is the largest value the budget, lease and job buckets take (default 1
	// MiB); placement books are bounded by the server's max_payload alone.
	BucketMaxValue int32
}

// Default stream limits (Options).
const (
	DefaultMarketMaxBytes    = 2 << 30
	DefaultTelemetryMaxBytes = 2 << 30
	DefaultFleetMaxBytes     = 4 << 30
	DefaultDLQMaxBytes       = 1 << 30
	DefaultBucketMaxBytes    = 256 << 20
	DefaultMaxPayloadPerMsg  = 1 << 20
)

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	def(&o.TelemetryMaxAge, 24*time.Hour)
	def(&o.FleetMaxAge, 400*24*time.Hour)
	def(&o.MarketMaxAge, 30*24*time.Hour)
	def(&o.DLQMaxAge, 30*24*time.Hour)
	def(&o.DuplicateWindow, 10*time.Minute)
	def(&o.LeaseTTL, 10*time.Second)
	if o.BudgetHistory == 0 {
		o.BudgetHistory = 64
	}
	if o.MaxPayloadPerMsg <= 0 {
		o.MaxPayloadPerMsg = DefaultMaxPayloadPerMsg
	}
	if o.BucketMaxValue <= 0 {
		o.BucketMaxValue = DefaultMaxPayloadPerMsg
	}
	size := func(b *int64, v int64) {
		if *b <= 0 {
			*b = v
		}
	}
	size(&o.MarketMaxBytes, DefaultMarketMaxBytes)
	size(&o.TelemetryMaxBytes, DefaultTelemetryMaxBytes)
	size(&o.FleetMaxBytes, DefaultFleetMaxBytes)
	size(&o.DLQMaxBytes, DefaultDLQMaxBytes)
	size(&o.BucketMaxBytes, DefaultBucketMaxBytes)
	return o
}

// Streams returns the stream definitions. Subjects follow DESIGN.md's table.
func Streams(o Options) []jetstream.StreamConfig {
	o = o.withDefaults()
	stream := func(name, desc string, subjects []string, age time.Duration, bytes int64) jetstream.StreamConfig {
		dup := o.DuplicateWindow
		if dup > age {
			dup = age
		}
		return jetstream.StreamConfig{
			Name: name, Description: desc, Subjects: subjects,
			Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage,
			MaxAge: age, MaxBytes: bytes, Duplicates: dup, Replicas: o.Replicas, MaxMsgSize: o.MaxPayloadPerMsg,
			Discard: jetstream.DiscardOld,
		}
	}
	return []jetstream.StreamConfig{
		stream(Market, "price observations and spot reclaim notices",
			[]string{"bursar.price.>", "bursar.reclaim.>"}, o.MarketMaxAge, o.MarketMaxBytes),
		stream(Telemetry, "GPU and token samples (age-limited)",
			[]string{"bursar.gpu.>", "bursar.tokens.>"}, o.TelemetryMaxAge, o.TelemetryMaxBytes),
		stream(Fleet, "replica states, decisions, actions, budget alerts, jobs and cost anomalies: the audit log",
			[]string{"bursar.fleet.>", "bursar.decision.>", "bursar.action.>", "bursar.budget.>", "bursar.job.>", "bursar.anomaly.>"},
			o.FleetMaxAge, o.FleetMaxBytes),
		stream(DLQ, "messages that failed to decode or were poison, with the reason in a header",
			[]string{dlqPrefix + ">"}, o.DLQMaxAge, o.DLQMaxBytes),
	}
}

// KV bucket names.
const (
	BucketBudgets   = "bursar_budgets"
	BucketPlacement = "bursar_placement"
	BucketLeases    = "bursar_leases"
)

// Buckets returns the KV bucket definitions: budget policies keep their history (the audit
// trail), leases expire on their own. A bucket holds state, not a log, so only the leases age;
// each is bounded in bytes (BucketMaxBytes) and, but for the books, in value size.
func Buckets(o Options) []jetstream.KeyValueConfig {
	o = o.withDefaults()
	return []jetstream.KeyValueConfig{
		{Bucket: BucketBudgets, Description: "budget policies, with history", History: o.BudgetHistory,
			Replicas: o.Replicas, Storage: jetstream.FileStorage, MaxBytes: o.BucketMaxBytes, MaxValueSize: o.BucketMaxValue},
		{Bucket: BucketPlacement, Description: "desired placement per workload", History: 8,
			Replicas: o.Replicas, Storage: jetstream.FileStorage, MaxBytes: o.BucketMaxBytes},
		{Bucket: BucketLeases, Description: "leader leases per partition", History: 1,
			TTL: o.LeaseTTL, Replicas: o.Replicas, Storage: jetstream.FileStorage, MaxBytes: o.BucketMaxBytes, MaxValueSize: o.BucketMaxValue},
		jobsBucket(o),
		anomalyAnswersBucket(o),
	}
}

// Ensure creates or updates every stream and bucket. It is idempotent: run it at every start.
func Ensure(ctx context.Context, js jetstream.JetStream, o Options) error {
	for _, cfg := range Streams(o) {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("creating stream %s: %w", cfg.Name, err)
		}
	}
	for _, cfg := range Buckets(o) {
		if _, err := js.CreateOrUpdateKeyValue(ctx, cfg); err != nil {
			return fmt.Errorf("creating KV bucket %s: %w", cfg.Bucket, err)
		}
	}
	return nil
}
