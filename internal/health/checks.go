package health

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
)

// NATS holds while the connection is up; during a reconnect it says so, since nothing the
// program publishes or consumes moves until the connection is back.
func NATS(nc *nats.Conn) Check {
	return Check{Name: "nats", Run: func(context.Context) error {
		if st := nc.Status(); st != nats.CONNECTED {
			return fmt.Errorf("connection is %s (reconnecting on its own)", st)
		}
		return nil
	}}
}

// Streams holds while JetStream answers for each named stream, so a program that consumes or
// publishes there is not ready on a server that lost them or has no JetStream.
func Streams(js jetstream.JetStream, names ...string) Check {
	return Check{Name: "streams", Run: func(ctx context.Context) error {
		return bus.Ready(ctx, js, names...)
	}}
}

// Querier is the one store method the store check needs.
type Querier interface {
	Query(ctx context.Context, query string) ([]byte, error)
}

// Store holds while the history store answers a query. The store is migrated when it is opened
// (store.Open), before the endpoint serves, so an answering store is a migrated one.
func Store(q Querier) Check {
	return Check{Name: "store", Run: func(ctx context.Context) error {
		if _, err := q.Query(ctx, "SELECT 1"); err != nil {
			return fmt.Errorf("history store does not answer: %w", err)
		}
		return nil
	}}
}
