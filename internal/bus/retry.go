package bus

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/backoff"
)

// A publish that gets no answer is tried again: on a cluster, a stream electing a new leader
// (its node stopped or cut off) answers nothing for a few seconds. Each try waits at most
// publishTry, all of them together at most publishPatience (or until ctx ends), so a
// misconfigured subject still fails in bounded time. The message keeps its Nats-Msg-Id, so a
// try that was stored after all is dropped as a duplicate.
const (
	publishTry      = 5 * time.Second
	publishPatience = 30 * time.Second
)

// errDuplicateInProcess is JetStream's answer to a try whose earlier twin is still being stored.
const errDuplicateInProcess = 10158

// send publishes msg and waits for its acknowledgement, trying again while the stream does not
// answer. before is what the streams had acknowledged before msg was first sent (see tops).
func (p *Publisher) send(ctx context.Context, msg *nats.Msg, before map[string]uint64) error {
	end := time.Now().Add(publishPatience)
	wait := backoff.Policy{Min: 50 * time.Millisecond, Max: time.Second}
	for try := 1; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, publishTry)
		ack, err := p.js.PublishMsg(tctx, msg)
		cancel()
		if err == nil {
			p.acked(before, ack)
			return nil
		}
		if ctx.Err() != nil || !unanswered(err) || time.Now().After(end) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait.Delay(try)):
		}
	}
}

// unanswered says whether err means the stream gave no answer yet, rather than a refusal.
func unanswered(err error) bool {
	var api *jetstream.APIError
	switch {
	case errors.As(err, &api):
		return api.ErrorCode == errDuplicateInProcess
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return true
	}
	return false
}
