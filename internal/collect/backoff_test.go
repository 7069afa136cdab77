package collect

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bursar-dev/bursar/internal/pricesource"
)

// TestFetchRetriesAreJittered: collectors failing together must not retry in lockstep, so the
// waits before the same retry differ between runs (without jitter each is exactly the ceiling),
// while each stays in the upper half of its ceiling.
func TestFetchRetriesAreJittered(t *testing.T) {
	const runs = 8
	seen := map[time.Duration]bool{}
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			server := &pricesource.Error{Kind: pricesource.KindServer}
			src := &scriptedSource{errs: []error{server}}
			job := Job{Source: src, Retries: 1, Backoff: time.Second, MaxBackoff: 5 * time.Second}
			if _, err := New(nil, quiet(), nil).fetch(context.Background(), job, t0); err != nil {
				t.Fatal(err)
			}
			gap := src.gaps()[0]
			if gap < time.Second/2 || gap > time.Second {
				t.Fatalf("wait = %v, want within [500ms, 1s]", gap)
			}
			seen[gap] = true
		})
	}
	if len(seen) < 2 {
		t.Errorf("%d runs all waited %v before the first retry: no jitter", runs, seen)
	}
}
