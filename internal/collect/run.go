package collect

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// fetch runs the source with a timeout per attempt, retrying retryable failures with
// jittered exponential backoff. A provider's Retry-After wins over a shorter backoff.
func (c *Collector) fetch(ctx context.Context, job Job, at time.Time) (pricing.Catalog, error) {
	delays := backoff.Policy{Min: job.Backoff, Max: job.MaxBackoff}
	for attempt := 0; ; attempt++ {
		cat, err := c.attempt(ctx, job, at)
		if err == nil {
			return cat, nil
		}
		if attempt >= job.Retries || !shouldRetry(err) || ctx.Err() != nil {
			return pricing.Catalog{}, err
		}
		c.metrics.failure(job.Source.Name(), errorKind(err))
		var asked time.Duration
		var ra retryAfter
		if errors.As(err, &ra) {
			asked = ra.RetryAfterDelay()
		}
		wait := delays.AtLeast(attempt+1, asked)
		c.log.Info("retrying price fetch", "source", job.Source.Name(), "attempt", attempt+1, "wait", wait, "err", err)
		if err := backoff.Sleep(ctx, wait); err != nil {
			return pricing.Catalog{}, err
		}
	}
}

// attempt runs one fetch. A source that panics (a parser bug on a bad input) fails that
// source's run with an error instead of taking the collector and every other source down.
func (c *Collector) attempt(ctx context.Context, job Job, at time.Time) (cat pricing.Catalog, err error) {
	if job.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = withFetchDeadline(ctx, job.Timeout, `the source's "timeout:" in collector.yaml`)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("price source panicked", "source", job.Source.Name(), "panic", r, "stack", string(debug.Stack()))
			cat, err = pricing.Catalog{}, fmt.Errorf("source %s panicked: %v (a bug: report it with the input)", job.Source.Name(), r)
		}
	}()
	return job.Source.Fetch(ctx, at)
}

// withFetchDeadline bounds a whole fetch, every page of it. The cause it sets names the limit
// and where it is set, so a source's timeout error says which limit ran out; it wraps
// context.DeadlineExceeded, so the fetch still counts as a timeout and is retried.
func withFetchDeadline(ctx context.Context, d time.Duration, setting string) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("fetch took longer than its %s limit (%s): %w", d, setting, context.DeadlineExceeded))
}

// shouldRetry: errors that say whether they are retryable are believed; a timeout is retried;
// anything else (a bug, a bad file) is not.
func shouldRetry(err error) bool {
	var r retryable
	if errors.As(err, &r) {
		return r.Retryable()
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// Run runs every job on its schedule until ctx ends: a snapshot run at start, then a run at
// each scheduled time plus random jitter; a run at or after the next snapshot time publishes
// every offer again. It returns when every job's loop has stopped.
func (c *Collector) Run(ctx context.Context, jobs []Job, snapshotSpec string) error {
	snap, err := cron.ParseStandard(snapshotSpec)
	if err != nil {
		return fmt.Errorf("snapshot schedule %q: %w", snapshotSpec, err)
	}
	scheds := make([]cron.Schedule, len(jobs))
	for i, j := range jobs {
		if scheds[i], err = cron.ParseStandard(j.Schedule); err != nil {
			return fmt.Errorf("source %s: schedule %q: %w", j.Source.Name(), j.Schedule, err)
		}
	}
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func(job Job, sched cron.Schedule) {
			defer wg.Done()
			c.loop(ctx, job, sched, snap)
		}(jobs[i], scheds[i])
	}
	wg.Wait()
	return nil
}

func (c *Collector) loop(ctx context.Context, job Job, sched, snap cron.Schedule) {
	now := time.Now()
	_, _ = c.RunOnce(ctx, job, now, true)
	nextSnap := snap.Next(now)
	for {
		next := sched.Next(time.Now())
		if job.Jitter > 0 {
			next = next.Add(rand.N(job.Jitter))
		}
		if backoff.Sleep(ctx, time.Until(next)) != nil {
			return
		}
		now := time.Now()
		snapshot := !now.Before(nextSnap)
		if snapshot {
			nextSnap = snap.Next(now)
		}
		_, _ = c.RunOnce(ctx, job, now, snapshot)
	}
}
