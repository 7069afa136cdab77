package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// errBehind ends a stream's run when the stream fell behind its consumer.
var errBehind = errors.New("the stream is behind its consumer")

// errGap ends a stream's run when a delivery was lost on its way (see loop.gap).
var errGap = errors.New("a delivery was lost on its way")

// errStalled ends a stream's run when its read stalled (see stalled).
var errStalled = errors.New("nobody is pulling the consumer's messages")

// isAhead reports whether a consumer has read past its stream's last message. It happens when the
// stream lost messages: a message block damaged on disk makes the server come back with only
// what precedes the damage, its last sequence below what the consumer read. The consumer then
// waits for a sequence that new messages reach only after as many more arrive, and delivers
// nothing in the meantime: every event published until then would be lost without a word.
func isAhead(info *jetstream.ConsumerInfo, last uint64) bool {
	return info.Delivered.Stream > last || info.AckFloor.Stream > last
}

// rewind sets cc to deliver what the recorder has not stored. When the stream still holds
// messages past the ack floor, from the first of them. Otherwise every message it kept was
// acked, and delivery starts with the first one stored after the last one the recorder stored
// (stored, known to a running recorder): those before it were recorded, those after it are new
// (the ones after the floor that the damage took are gone). A recorder just started knows only
// the time of the last ack, which comes after messages stored but not yet acked; it starts
// there. Without either it delivers the whole stream again (event ids deduplicate the repeats).
// It says so loudly and counts it.
//
// A running recorder must not start at the last ack's time: a cut-off stream leader answers with
// its stale last sequence for a few seconds, so a stream can look behind its consumer while it
// holds every message, and those stored before the ack but not acked would be skipped, unrecorded.
func (r *Recorder) rewind(cc *jetstream.ConsumerConfig, info *jetstream.ConsumerInfo, stream string, last uint64,
	stored time.Time) {
	cc.OptStartSeq, cc.OptStartTime = 0, nil
	var from string
	start, ok := resumeAfter(info, stored)
	switch {
	case info.AckFloor.Stream < last:
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, info.AckFloor.Stream+1
		from = fmt.Sprintf("sequence %d, after its last ack", cc.OptStartSeq)
	case ok:
		cc.DeliverPolicy, cc.OptStartTime = jetstream.DeliverByStartTimePolicy, &start
		from = "the first message stored after " + start.UTC().Format(time.RFC3339Nano)
	default:
		cc.DeliverPolicy = jetstream.DeliverAllPolicy
		from = "the first message"
	}
	r.metrics.resets.WithLabelValues(stream).Inc()
	r.cfg.Log.Error(fmt.Sprintf("stream %s lost messages: it ends at sequence %d, but the recorder had read to %d "+
		"(a damaged store?); events stored there after the last ack and before the damage are gone; recording resumes at %s",
		stream, last, info.Delivered.Stream, from), "stream", stream, "consumer", cc.Durable)
}

// resumeAfter is the stream time delivery starts after, when every message the stream kept was
// acked: just after the last message stored, or else just after the last ack.
func resumeAfter(info *jetstream.ConsumerInfo, stored time.Time) (time.Time, bool) {
	if !stored.IsZero() {
		return stored.Add(time.Nanosecond), true
	}
	if t := info.AckFloor.Last; t != nil && !t.IsZero() {
		return t.Add(time.Nanosecond), true
	}
	return time.Time{}, false
}

// mark is a message the recorder stored: its stream sequence and stream time.
type mark struct {
	seq uint64
	at  time.Time
}

// errRenumbered ends a stream's run when the stream numbered new messages with sequences the
// recorder had read (see renumbered).
var errRenumbered = errors.New("the stream numbered new messages with sequences the recorder had read")

// renumbered reports whether the stream lost messages and then numbered new ones with sequences
// the recorder had read: the stream now holds a message stored after m at m's sequence. A damaged
// replica came back short and led (at once, on a single server), and new messages took the stream
// past the consumer's position before it was seen behind: the consumer would never deliver the
// new messages at the sequences it had already passed, and nothing would say so. It returns the
// time of the message there now. A failure to look is taken for no: the next look tries again.
func (r *Recorder) renumbered(ctx context.Context, stream string, m mark) (time.Time, bool) {
	if m.seq == 0 {
		return time.Time{}, false
	}
	st, err := r.js.Stream(ctx, stream)
	if err != nil {
		return time.Time{}, false
	}
	msg, err := st.GetMsg(ctx, m.seq)
	if err != nil || !msg.Time.After(m.at) {
		return time.Time{}, false
	}
	return msg.Time, true
}

// sayRenumbered logs, as an error, and counts a stream found renumbered at m.
func (r *Recorder) sayRenumbered(log *slog.Logger, stream string, m mark, now time.Time) {
	r.metrics.resets.WithLabelValues(stream).Inc()
	log.Error(fmt.Sprintf("stream %s lost messages and numbered new ones with sequences the recorder had read: "+
		"sequence %d holds a message stored at %s, where the recorder read one stored at %s (a damaged store?); "+
		"events stored after the last ack and before the damage are gone; recording resumes after the last message stored",
		stream, m.seq, now.UTC().Format(time.RFC3339Nano), m.at.UTC().Format(time.RFC3339Nano)), "stream", stream)
}

// resumeRenumbered sets cc to deliver from the first message stored after stored, the last
// message a run stored, when the stream renumbered it, and reports whether it did. It says so
// unless the run that found it did (said). A recorder just started knows no message it stored,
// and does not look.
func (r *Recorder) resumeRenumbered(ctx context.Context, cc *jetstream.ConsumerConfig, stream string, stored mark, said bool) bool {
	now, ok := r.renumbered(ctx, stream, stored)
	if !ok {
		return false
	}
	start := stored.at.Add(time.Nanosecond)
	cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = jetstream.DeliverByStartTimePolicy, 0, &start
	if !said {
		r.sayRenumbered(r.cfg.Log.With("consumer", cc.Durable), stream, stored, now)
	}
	return true
}

// confirmations is how many checks in a row must find a running consumer ahead of its stream.
const confirmations = 3

// lastSeq is the stream's last sequence.
func (r *Recorder) lastSeq(ctx context.Context, stream string) (uint64, error) {
	st, err := r.js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", stream, err)
	}
	return st.CachedInfo().State.LastSeq, nil
}

// watch checks every Check that the stream has not fallen behind l's consumer cons, and that
// the read has not stalled; it ends the stream's run (behind) when either holds, so it starts
// over on a rewound consumer or a fresh read.
func (r *Recorder) watch(ctx context.Context, behind context.CancelCauseFunc, l *loop, cons jetstream.Consumer) {
	t := time.NewTicker(r.cfg.Check)
	defer t.Stop()
	ahead, stuck := 0, 0
	seen := l.seen.Load()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		info, err := cons.Info(ctx)
		if err != nil {
			continue // the server may be restarting; the next check sees it
		}
		if last, err := r.lastSeq(ctx, l.stream); err == nil && isAhead(info, last) {
			// A cluster electing a stream leader can answer from a replica not yet caught up
			// for a moment; a stream that lost messages stays behind.
			ahead++
		} else {
			ahead = 0
		}
		if now := l.seen.Load(); now == seen && l.waiting.Load() && stalled(info) {
			stuck++
		} else {
			stuck, seen = 0, now
		}
		switch {
		case ahead >= confirmations:
			behind(errBehind)
			return
		case stuck >= confirmations:
			r.metrics.stalls.WithLabelValues(l.stream).Inc()
			l.log.Warn("the consumer holds messages but nobody pulls them (a pull request lost in a leader change?); reading again",
				"consumer", l.durable, "pending", info.NumPending)
			behind(errStalled)
			return
		}
	}
}

// stalled says a consumer holds messages for its reader but has no pull request waiting and
// room to deliver: the reader's pull request was lost (a consumer leader change can drop it
// without the client asking again: nats-io/nats.go#2063), and the iterator would wait for ever.
func stalled(info *jetstream.ConsumerInfo) bool {
	room := info.Config.MaxAckPending <= 0 || info.NumAckPending < info.Config.MaxAckPending
	return info.NumPending > 0 && info.NumWaiting == 0 && room
}
