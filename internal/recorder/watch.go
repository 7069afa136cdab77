package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// confirmations is how many checks in a row must find a running consumer ahead of its stream, or
// its read stalled.
const confirmations = 3

// watch checks every Check that the stream has not fallen behind l's consumer cons, and that
// the read has not stalled; it ends the stream's run (restart) when either holds, so it starts
// over on a rewound consumer or a fresh read.
func (r *Recorder) watch(ctx context.Context, restart context.CancelCauseFunc, l *loop, cons jetstream.Consumer) {
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
		if last, err := r.lastSeq(ctx, l.stream); err == nil && (position{last: last, delivered: info.Delivered.Stream,
			ackFloor: info.AckFloor.Stream}).ahead() {
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
			restart(causeBehind)
			return
		case stuck >= confirmations:
			l.log.Warn("the consumer holds messages but nobody pulls them (a pull request lost in a leader change?); reading again",
				"consumer", l.durable, "pending", info.NumPending)
			restart(causeStalled)
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

// lastSeq is the stream's last sequence.
func (r *Recorder) lastSeq(ctx context.Context, stream string) (uint64, error) {
	st, err := r.js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", stream, err)
	}
	return st.CachedInfo().State.LastSeq, nil
}

// storedAt is when the message the stream holds at seq was stored; zero when it holds none there,
// or seq is zero. A failure to look is taken for none: the next look tries again.
func storedAt(ctx context.Context, st jetstream.Stream, seq uint64) (time.Time, error) {
	if seq == 0 {
		return time.Time{}, nil
	}
	msg, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading message %d of stream %s: %w", seq, st.CachedInfo().Config.Name, err)
	}
	return msg.Time, nil
}

// position reads what the server says of stream and its consumer (info), and of the message at
// the cursor's sequence.
func (r *Recorder) position(ctx context.Context, stream string, info *jetstream.ConsumerInfo, cursor mark) (position, error) {
	st, err := r.js.Stream(ctx, stream)
	if err != nil {
		return position{}, fmt.Errorf("reading stream %s: %w", stream, err)
	}
	at, err := storedAt(ctx, st, cursor.seq)
	if err != nil {
		return position{}, err
	}
	p := position{last: st.CachedInfo().State.LastSeq, delivered: info.Delivered.Stream,
		ackFloor: info.AckFloor.Stream, unacked: info.NumAckPending, atCursor: at}
	if t := info.AckFloor.Last; t != nil {
		p.ackedAt = *t
	}
	return p, nil
}

// sayBehind logs, as an error, a stream found behind its consumer p.
func sayBehind(log *slog.Logger, stream string, p position, res resume) {
	log.Error(fmt.Sprintf("stream %s lost messages: it ends at sequence %d, but the recorder had read to %d "+
		"(a damaged store?); events stored there after the last ack and before the damage are gone; recording resumes at %s",
		stream, p.last, p.delivered, res), "stream", stream)
}

// sayRenumbered logs, as an error, a stream found renumbered at m, which now holds there a message
// stored at now.
func sayRenumbered(log *slog.Logger, stream string, m mark, now time.Time) {
	log.Error(fmt.Sprintf("stream %s lost messages and numbered new ones with sequences the recorder had read: "+
		"sequence %d holds a message stored at %s, where the recorder read one stored at %s (a damaged store?); "+
		"events stored after the last ack and before the damage are gone; recording resumes after the last message stored",
		stream, m.seq, now.UTC().Format(time.RFC3339Nano), m.at.UTC().Format(time.RFC3339Nano)), "stream", stream)
}
