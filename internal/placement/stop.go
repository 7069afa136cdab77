package placement

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MaxReplicas is the most replicas the planner plans for one workload, whatever its minimum or
// demand asks: far above what one workload of a real fleet runs, and low enough that a plan for
// it stays well under a second. The fleet file's check enforces it on replicas.min and max; the
// planner clamps to it so that a demand read from bad telemetry cannot make a plan run out of
// memory or time.
const MaxReplicas = 10_000

// WhyNoOffers is the Shortfall.Why of a workload planned before any offer was priced: at start-up
// it is no fault of the workload's.
const WhyNoOffers = "no offers priced yet"

// ErrStopped says a plan was cancelled (its context was done) before it finished; no partial plan
// is returned. errors.Is also matches the context's own error (context.Canceled or
// context.DeadlineExceeded).
var ErrStopped = errors.New("plan stopped before it finished")

// PlanContext is Plan that gives up, returning an error wrapping ErrStopped, once ctx is done:
// the planner checks it between workloads and within the long loops of one workload, so shutdown
// never waits for a large plan.
func PlanContext(ctx context.Context, s Snapshot, p Policy, now time.Time) (Decision, error) {
	pl, err := NewPlannerContext(ctx, s, p, now)
	if err != nil {
		return Decision{}, err
	}
	return pl.Decision(), nil
}

// halted says whether the plan in progress was cancelled. It is sticky, so every loop that asks
// after the first yes unwinds at once.
func (wp *workloadPlanner) halted() bool {
	if !wp.stopped && wp.ctx != nil && wp.ctx.Err() != nil {
		wp.stopped = true
	}
	return wp.stopped
}

// stopError is the error a cancelled plan returns, naming the workload it was planning.
func stopError(ctx context.Context, workload string) error {
	return fmt.Errorf("planning workload %s: %w: %w", workload, ErrStopped, context.Cause(ctx))
}
