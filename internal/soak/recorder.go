package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/recorder"
)

// recording is the recorder running on its own connection.
type recording struct {
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan error
}

func (r *rig) startRecorder(ctx context.Context) (*recording, error) {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, js, err := r.cl.connect(cctx, bus.RoleArbiter, "soak-recorder", 2, nats.DontRandomize())
	if err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(ctx)
	rec := &recording{nc: nc, cancel: stop, done: make(chan error, 1)}
	// AckWait is 15 s here, not the default 5 min. The recorder acks without waiting for the
	// server's reply (Ack, not DoubleAck), so an ack in flight when a node restarts or is cut
	// off is lost without a word; the rows are committed, and only the redelivery AckWait later
	// (acked again as already stored) moves the consumer's ack floor past that message. The
	// run's end waits at most 2 min for every consumer's ack floor to reach its stream's end
	// (caughtUp), so with 5 min a run whose faults lost one ack would fail there although
	// nothing was lost. Nothing else in the soak depends on it: a killed recorder's unacked
	// deliveries are taken back by its successor at once (it resets the consumer to the ack
	// floor), and a delivery redelivered while its batch is still being inserted is skipped.
	cfg := recorder.Config{Log: r.log.With("part", "recorder"), MaxDelay: 250 * time.Millisecond,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, Check: time.Second, AckWait: 15 * time.Second}
	go func() {
		err := recorder.New(js, r.st, cfg).Run(rctx)
		if err != nil && rctx.Err() == nil {
			r.fail(fmt.Errorf("the recorder stopped: %w", err))
		}
		rec.done <- err
	}()
	return rec, nil
}

// stop kills the recorder: its connection first, so nothing in flight is acked.
func (rec *recording) stop() {
	rec.nc.Close()
	rec.cancel()
	<-rec.done
}

// ensure creates the streams and buckets at R3, trying again while the cluster does not yet
// know all its peers ("no suitable peers for placement").
func ensure(ctx context.Context, js jetstream.JetStream) error {
	for {
		err := bus.Ensure(ctx, js, bus.Options{Replicas: nodes, LeaseTTL: leaseTTL})
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
