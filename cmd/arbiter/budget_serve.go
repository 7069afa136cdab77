package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/budget"
)

// answerBudgetWrites answers "arbiter budget set|delete" for an arbiter that runs no budgets (no
// fleet file), which would otherwise leave them nobody to ask: only the arbiter writes the bucket.
func answerBudgetWrites(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, log *slog.Logger) error {
	s, err := budget.OpenStore(ctx, js)
	if err != nil {
		return err
	}
	sub, err := budget.ServeAdmin(ctx, nc, s, time.Now, log)
	if err != nil {
		return err
	}
	<-ctx.Done()
	_ = sub.Unsubscribe() // the connection drains at exit anyway
	return nil
}
