package bus

import "github.com/nats-io/nats.go/jetstream"

// BucketAnomalyAnswers holds people's answers to cost anomalies (Slack's Expected / Not expected
// buttons), one key per cause (internal/anomalywatch names the keys). The leading arbiter loads
// them so that a repeat of a cause answered "expected" is not posted again; only the arbiter
// writes the bucket, by compare-and-set. Its history is the answers' audit trail.
const BucketAnomalyAnswers = "bursar_anomaly_answers"

func anomalyAnswersBucket(o Options) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketAnomalyAnswers, Description: "answers to cost anomalies, by cause",
		History: 16, Replicas: o.Replicas, Storage: jetstream.FileStorage, MaxBytes: o.BucketMaxBytes, MaxValueSize: o.BucketMaxValue}
}
