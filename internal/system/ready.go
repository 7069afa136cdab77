package system

import (
	"context"
	"errors"
	"fmt"

	"github.com/bursar-dev/bursar/internal/bus"
)

// Ready says whether this arbiter does its part now, for its readiness probe: the budgets have
// loaded and the service runs, and it either leads or, as a standby, can read the lease it would
// take over when the leader goes. A standby that cannot see the lease could not take over.
func (s *System) Ready(ctx context.Context) error {
	if !s.running.Load() {
		return errors.New("starting: budget policies and spend are still loading")
	}
	if s.Service.Leading() {
		return nil
	}
	kv, err := s.js.KeyValue(ctx, bus.BucketLeases)
	if err == nil {
		_, err = kv.Status(ctx)
	}
	if err != nil {
		return fmt.Errorf("standby cannot read the leader lease (bucket %s): %w", bus.BucketLeases, err)
	}
	return nil
}
