package recorder

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestResumeFrom is the recorder's resume rule: where a stream's consumer resumes after a run
// ended for each cause, and when the recorder starts, from the cursor (the last message stored)
// and what the server says of the stream and the consumer. A stream that looks behind its
// consumer while the recorder runs (a cut-off stream leader answers with its stale last
// sequence) is read again from just after the cursor, not after the last ack's time: messages
// stored before that ack but not yet acked would be skipped, unrecorded. A recorder just started
// knows only the ack.
func TestResumeFrom(t *testing.T) {
	acked := time.Date(2026, 12, 2, 6, 12, 10, 156, time.UTC)
	stored := acked.Add(-300 * time.Millisecond) // the last stored message, acked 300 ms later
	cursor := mark{seq: 469, at: stored}
	caughtUp := position{last: 500, delivered: 500, ackFloor: 500, ackedAt: acked}
	unacked := position{last: 500, delivered: 480, ackFloor: 400, ackedAt: acked, unacked: 80}
	lost := position{last: 363, delivered: 469, ackFloor: 300, ackedAt: acked, unacked: 169} // the damage took 364-469
	allAcked := position{last: 363, delivered: 469, ackFloor: 469, ackedAt: acked}
	renumberedAt := unacked
	renumberedAt.atCursor = stored.Add(time.Hour)
	bySeq := func(c cause, seq uint64, found bool) resume {
		return resume{cause: c, found: found, policy: jetstream.DeliverByStartSequencePolicy, seq: seq}
	}
	byTime := func(c cause, after time.Time) resume {
		return resume{cause: c, found: true, policy: jetstream.DeliverByStartTimePolicy, from: after.Add(time.Nanosecond)}
	}
	for _, c := range []struct {
		name     string
		reported cause
		cursor   mark
		pos      position
		want     resume
	}{
		{"started, all acked: reads on", causeNone, mark{}, caughtUp, resume{keep: true}},
		{"started after a crash: from the ack floor, in order", causeNone, mark{}, unacked, bySeq(causeNone, 401, false)},
		{"stalled, nothing unacked: a fresh read", causeStalled, cursor, caughtUp, resume{cause: causeStalled, keep: true}},
		{"stalled with unacked deliveries: from the ack floor", causeStalled, cursor, unacked, bySeq(causeStalled, 401, false)},
		{"lost delivery: from the ack floor", causeLostDelivery, cursor, unacked, bySeq(causeLostDelivery, 401, false)},
		{"behind, the stream holds messages past the ack floor", causeBehind, cursor, lost, bySeq(causeBehind, 301, true)},
		{"behind, all kept acked, a running recorder: after the cursor", causeBehind, cursor, allAcked, byTime(causeBehind, stored)},
		{"behind, all kept acked, a recorder just started: after the last ack", causeNone, mark{}, allAcked, byTime(causeBehind, acked)},
		{"behind, nothing known: the whole stream", causeNone, mark{},
			position{last: 363, delivered: 469, ackFloor: 469}, resume{cause: causeBehind, found: true, policy: jetstream.DeliverAllPolicy}},
		{"behind found after a stall", causeStalled, cursor, lost, bySeq(causeBehind, 301, true)},
		{"behind reported, not seen again (a stale leader's answer)", causeBehind, cursor, unacked, bySeq(causeBehind, 401, false)},
		{"renumbered at the cursor: after the cursor", causeRenumbered, cursor, renumberedAt, byTime(causeRenumbered, stored)},
		{"renumbered past the cursor only: from the ack floor", causeRenumbered, cursor, unacked, bySeq(causeRenumbered, 401, false)},
		{"renumbered found after a lost delivery", causeLostDelivery, cursor, renumberedAt, byTime(causeRenumbered, stored)},
		{"started, no cursor: renumbering is not looked for", causeNone, mark{}, renumberedAt, bySeq(causeNone, 401, false)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := resumeFrom(c.reported, c.cursor, c.pos)
			if !got.from.Equal(c.want.from) {
				t.Errorf("resumes from time %v, want %v", got.from, c.want.from)
			}
			got.from, c.want.from = time.Time{}, time.Time{}
			if got != c.want {
				t.Errorf("resumeFrom = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestResumeSetsTheConsumer: a resume sets the consumer's deliver policy and start, and clears
// the start it does not use.
func TestResumeSetsTheConsumer(t *testing.T) {
	at := time.Date(2026, 12, 2, 6, 12, 10, 0, time.UTC)
	for _, c := range []struct {
		name     string
		res      resume
		wantSeq  uint64
		wantTime time.Time
	}{
		{"by sequence", resume{policy: jetstream.DeliverByStartSequencePolicy, seq: 301}, 301, time.Time{}},
		{"by time", resume{policy: jetstream.DeliverByStartTimePolicy, from: at}, 0, at},
		{"all", resume{policy: jetstream.DeliverAllPolicy}, 0, time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := at.Add(-time.Hour)
			cc := jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy, OptStartSeq: 7, OptStartTime: &old}
			c.res.apply(&cc)
			var got time.Time
			if cc.OptStartTime != nil {
				got = *cc.OptStartTime
			}
			if cc.DeliverPolicy != c.res.policy || cc.OptStartSeq != c.wantSeq || !got.Equal(c.wantTime) {
				t.Errorf("delivers by %v from sequence %d, time %v; want %v, %d, %v", cc.DeliverPolicy, cc.OptStartSeq,
					got, c.res.policy, c.wantSeq, c.wantTime)
			}
		})
	}
}
