// Package backoff computes the waits between retries: exponential growth from a minimum, a cap,
// and jitter, so that many clients failing together (every consumer when ClickHouse goes down,
// every collector when a provider rate-limits) do not come back in lockstep.
package backoff

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Policy is an exponential backoff with equal jitter: retry n has a ceiling of Min·2^(n-1),
// capped at Max, and waits a uniform draw from the upper half of that ceiling. Half the wait
// still grows exponentially, so a retry never spins; the other half spreads clients apart.
// The zero Policy waits nothing.
type Policy struct {
	Min time.Duration // ceiling of the first retry's wait
	Max time.Duration // cap on every wait; 0 or less: no cap
	// Rand draws the jitter. Nil uses the global source, which is safe for concurrent use; a
	// seeded one makes the waits reproducible (in tests) and must not be shared by goroutines.
	Rand *rand.Rand
}

// Delay returns the wait before retry n (1 for the first retry; n below 1 counts as 1). It lies
// in [c-c/2, c] where c is Ceiling(n).
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	half := c / 2
	return c - half + time.Duration(p.int64N(int64(half)+1))
}

// Ceiling returns the largest wait before retry n: Min doubled n-1 times, capped at Max, and
// never overflowing however large n is.
func (p Policy) Ceiling(n int) time.Duration {
	if p.Min <= 0 {
		return 0
	}
	c := p.Min
	for i := 1; i < n && (p.Max <= 0 || c < p.Max); i++ {
		if c > math.MaxInt64/2 {
			c = math.MaxInt64
			break
		}
		c *= 2
	}
	if p.Max > 0 {
		c = min(c, p.Max)
	}
	return c
}

// AtLeast returns the wait before retry n, or floor where that is longer: a provider's
// Retry-After wins over a shorter backoff (and over the cap), never the other way round.
func (p Policy) AtLeast(n int, floor time.Duration) time.Duration {
	return max(p.Delay(n), floor)
}

func (p Policy) int64N(n int64) int64 {
	if p.Rand != nil {
		return p.Rand.Int64N(n)
	}
	return rand.Int64N(n)
}

// Sleep waits d, or until ctx ends, and then returns ctx's error (nil when the wait ran out). A
// wait of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
