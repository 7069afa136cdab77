package recorder

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestARewindResumesAfterWhatWasStored: a stream that looks behind its consumer while the
// recorder runs (a cut-off stream leader answers with its stale last sequence) is read again
// from just after the last message the recorder stored, not after the last ack's time: messages
// stored before that ack but not yet acked would be skipped, unrecorded. Before, a running
// recorder started at the ack's time. A recorder just started knows only the ack.
func TestARewindResumesAfterWhatWasStored(t *testing.T) {
	acked := time.Date(2026, 12, 2, 6, 12, 10, 156, time.UTC)
	stored := acked.Add(-300 * time.Millisecond) // the last stored message, acked 300 ms later
	for _, c := range []struct {
		name      string
		ackFloor  uint64
		ackLast   *time.Time
		stored    time.Time
		policy    jetstream.DeliverPolicy
		startSeq  uint64
		startTime time.Time
	}{
		{"the stream holds messages past the ack floor", 300, &acked, stored, jetstream.DeliverByStartSequencePolicy, 301, time.Time{}},
		{"a running recorder", 469, &acked, stored, jetstream.DeliverByStartTimePolicy, 0, stored.Add(time.Nanosecond)},
		{"a recorder just started", 469, &acked, time.Time{}, jetstream.DeliverByStartTimePolicy, 0, acked.Add(time.Nanosecond)},
		{"nothing known", 469, nil, time.Time{}, jetstream.DeliverAllPolicy, 0, time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := New(nil, nil, Config{})
			cc := r.consumerConfig("TELEMETRY")
			info := &jetstream.ConsumerInfo{Delivered: jetstream.SequenceInfo{Stream: 469},
				AckFloor: jetstream.SequenceInfo{Stream: c.ackFloor, Last: c.ackLast}}
			r.rewind(&cc, info, "TELEMETRY", 363, c.stored)
			var got time.Time
			if cc.OptStartTime != nil {
				got = *cc.OptStartTime
			}
			if cc.DeliverPolicy != c.policy || cc.OptStartSeq != c.startSeq || !got.Equal(c.startTime) {
				t.Errorf("delivers by %v from sequence %d, time %v; want %v, %d, %v", cc.DeliverPolicy, cc.OptStartSeq,
					got, c.policy, c.startSeq, c.startTime)
			}
		})
	}
}
