package recorder

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// cause is why the recorder reads a stream again. A detector reports it by ending the stream's
// run with it (the watch: causeStalled, causeBehind; the loop: causeLostDelivery, causeRenumbered), and the next run
// resumes where resumeFrom says, from the stream's cursor and what the server says of the stream
// and its consumer, as nats.go's ordered consumer resets from its one cursor.
type cause string

const (
	// causeNone: no run ended; the recorder is starting.
	causeNone cause = ""
	// causeStalled: the consumer holds messages but nobody pulls them (see stalled).
	causeStalled cause = "stalled"
	// causeBehind: the stream ends before what its consumer read: it lost messages (see position.ahead).
	causeBehind cause = "behind"
	// causeLostDelivery: a delivery was lost on its way; its consumer sequence skipped (see loop.gap).
	causeLostDelivery cause = "lost_delivery"
	// causeRenumbered: the stream numbered new messages with sequences the recorder had read (see
	// position.renumbered).
	causeRenumbered cause = "renumbered"
)

func (c cause) Error() string {
	switch c {
	case causeStalled:
		return "nobody is pulling the consumer's messages"
	case causeBehind:
		return "the stream is behind its consumer"
	case causeLostDelivery:
		return "a delivery was lost on its way"
	case causeRenumbered:
		return "the stream numbered new messages with sequences the recorder had read"
	}
	return "the recorder started"
}

// mark is a message the recorder stored: its stream sequence and stream time. A stream's cursor
// is the last message a run stored (zero: none yet in this process).
type mark struct {
	seq uint64
	at  time.Time
}

// position is what the server says of a stream and its recorder's consumer when a run starts.
type position struct {
	last      uint64    // the stream's last sequence
	delivered uint64    // the last stream sequence the consumer delivered
	ackFloor  uint64    // the consumer's ack floor, a stream sequence
	ackedAt   time.Time // when the message at the ack floor was stored; zero: unknown
	unacked   int       // deliveries not yet acked
	// atCursor is when the message the stream holds now at the cursor's sequence was stored;
	// zero when it holds none there (or the recorder has no cursor).
	atCursor time.Time
}

// ahead reports whether the consumer has read past its stream's last message. It happens when the
// stream lost messages: a message block damaged on disk makes the server come back with only
// what precedes the damage, its last sequence below what the consumer read. The consumer then
// waits for a sequence that new messages reach only after as many more arrive, and delivers
// nothing in the meantime: every event published until then would be lost without a word.
func (p position) ahead() bool { return p.delivered > p.last || p.ackFloor > p.last }

// renumbered reports whether the stream holds, at the cursor's sequence, a message stored after
// the one the recorder stored there: it lost messages and numbered new ones with sequences the
// recorder had read. A damaged replica came back short and led (at once, on a single server), and
// new messages took the stream past the consumer's position before it was seen behind: the
// consumer would never deliver the new messages at the sequences it had already passed.
func (p position) renumbered(cursor mark) bool {
	return cursor.seq != 0 && p.atCursor.After(cursor.at)
}

// resume is where a stream's consumer delivers from when a run starts.
type resume struct {
	cause  cause // the restart's cause: what the position shows first, else the one reported
	found  bool  // the position shows cause (behind, renumbered), not only its detector
	keep   bool  // the consumer stays as it is, read on a fresh iterator
	policy jetstream.DeliverPolicy
	seq    uint64    // the first sequence delivered, by DeliverByStartSequencePolicy
	from   time.Time // the earliest stream time delivered, by DeliverByStartTimePolicy
}

// resumeFrom decides where a stream's consumer resumes after a run ended for reported (causeNone:
// when the recorder starts), from the stream's cursor and the position. Its rules, first match:
//
//   - The stream is behind its consumer: from the first message past the ack floor, when the
//     stream still holds one (resuming after the last ack's time would skip messages stored
//     before that ack but never acked). Otherwise every message it kept was acked, and delivery
//     starts just after the cursor: those before it were recorded, those after it are new (the
//     ones the damage took are gone). A recorder just started has no cursor and starts just
//     after the last ack's time, without which it delivers the whole stream again (event ids
//     deduplicate the repeats). A running recorder must not start at the last ack's time: a
//     cut-off stream leader answers with its stale last sequence for a few seconds, so a stream
//     can look behind its consumer while it holds every message, and those stored before the
//     ack but not acked would be skipped, unrecorded.
//   - The stream renumbered the cursor's message: just after the cursor, by time.
//   - Deliveries are unacked (a run crashed or was killed mid-batch, or ended on a lost delivery
//     or a stall): from the ack floor, so delivery resumes in stream order and the batch is cut
//     the same way as the one that may already be stored, and deduplicated. JetStream would
//     otherwise redeliver them only after AckWait, behind newer messages.
//   - Otherwise the consumer reads on where it was.
func resumeFrom(reported cause, cursor mark, p position) resume {
	switch {
	case p.ahead():
		r := resume{cause: causeBehind, found: true}
		switch {
		case p.ackFloor < p.last:
			r.policy, r.seq = jetstream.DeliverByStartSequencePolicy, p.ackFloor+1
		case !cursor.at.IsZero():
			r.policy, r.from = jetstream.DeliverByStartTimePolicy, cursor.at.Add(time.Nanosecond)
		case !p.ackedAt.IsZero():
			r.policy, r.from = jetstream.DeliverByStartTimePolicy, p.ackedAt.Add(time.Nanosecond)
		default:
			r.policy = jetstream.DeliverAllPolicy
		}
		return r
	case p.renumbered(cursor):
		return resume{cause: causeRenumbered, found: true, policy: jetstream.DeliverByStartTimePolicy,
			from: cursor.at.Add(time.Nanosecond)}
	case p.unacked > 0:
		return resume{cause: reported, policy: jetstream.DeliverByStartSequencePolicy, seq: p.ackFloor + 1}
	default:
		return resume{cause: reported, keep: true}
	}
}

// String says where delivery resumes, for the log.
func (r resume) String() string {
	switch {
	case r.keep:
		return "where the consumer was"
	case r.policy == jetstream.DeliverByStartSequencePolicy:
		return fmt.Sprintf("sequence %d, after its last ack", r.seq)
	case r.policy == jetstream.DeliverByStartTimePolicy:
		return "the first message stored after " + r.from.Add(-time.Nanosecond).UTC().Format(time.RFC3339Nano)
	}
	return "the first message"
}

// apply sets cc to deliver from r.
func (r resume) apply(cc *jetstream.ConsumerConfig) {
	cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = r.policy, r.seq, nil
	if r.policy == jetstream.DeliverByStartTimePolicy {
		from := r.from
		cc.OptStartTime = &from
	}
}
