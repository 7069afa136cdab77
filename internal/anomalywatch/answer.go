package anomalywatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
)

// Answer records a person's answer: stored in the answers bucket (when the watcher has one),
// then heeded, so that a repeat of an expected cause is not posted again. A newer answer already
// stored for the cause wins over it.
func (w *Watcher) Answer(ctx context.Context, a Answer) error {
	if a.Cause == "" {
		return errors.New("an anomaly answer needs the cause it answers")
	}
	if w.o.Answers != nil {
		kept, err := Answers{KV: w.o.Answers}.Put(ctx, a)
		if err != nil {
			return err
		}
		if !kept {
			return nil
		}
	}
	w.heed(a)
	return nil
}

func (w *Watcher) heed(a Answer) {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	w.quiet.Answer(a.Feedback())
}

// Load reads every stored answer into the quieter: what a restarted watcher knows.
func (w *Watcher) Load(ctx context.Context) error {
	if w.o.Answers == nil {
		return nil
	}
	all, err := Answers{KV: w.o.Answers}.ReadAll(ctx)
	for _, a := range all {
		w.heed(a)
	}
	if errors.Is(err, ErrCorrupt) {
		w.o.Log.Error("anomaly answers that do not read; their causes alert again", "err", err)
		return nil
	}
	return err
}

// follow heeds every answer stored and every one stored later (by this arbiter or another one
// that got the click), until ctx ends. It returns once the stored ones are read.
func (w *Watcher) follow(ctx context.Context) error {
	kw, err := bus.Watch(ctx, w.o.Answers, ">", w.o.Log)
	if err != nil {
		return fmt.Errorf("following anomaly answers: %w", err)
	}
	loaded := make(chan struct{})
	go func() {
		defer kw.Stop()
		for e := range kw.Updates() {
			if e == nil {
				close(loaded)
				continue
			}
			w.apply(e)
		}
	}()
	select {
	case <-loaded:
		return nil
	case <-ctx.Done():
		return nil
	}
}

func (w *Watcher) apply(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	a, err := Decode(e.Key(), e.Value())
	if err != nil {
		w.o.Log.Error("an anomaly answer that does not read; its cause alerts again", "err", err)
		return
	}
	w.heed(a)
}
